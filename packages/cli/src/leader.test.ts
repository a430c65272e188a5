import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  HealthServices,
  HealthStatusManager,
  NotLeaderError,
  toServiceError,
  bindServer,
  handleUnary,
  silentLogger,
  loadHealthProto,
  loadProto,
  shutdownServer,
  type DispatcherHandlers,
} from '@rebound/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { resolveClusterTarget } from './cluster-target.js';
import { HA_DIR_ENV } from './names.js';
import type { CliIo } from './io.js';
import { leader, type LeaderOptions } from './leader.js';
import type { CommandHandlers } from './options.js';
import { runCli } from './program.js';

const tempDirs: string[] = [];
function haDir(leaderJson?: object): string {
  const dir = mkdtempSync(join(tmpdir(), 'rebound-leader-'));
  tempDirs.push(dir);
  if (leaderJson) writeFileSync(join(dir, 'leader.json'), JSON.stringify(leaderJson));
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const servers: grpc.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => shutdownServer(s, 100)));
});

/** A JobMaster stand-in on 127.0.0.1:0: health service, and a Dispatcher that leads when `leads`. */
async function jobMaster(id: string, epoch: number, leads: boolean): Promise<string> {
  const health = new HealthStatusManager({
    [HealthServices.server]: 'SERVING',
    [HealthServices.dispatcher]: leads ? 'SERVING' : 'NOT_SERVING',
  });
  const notLeader = (): never => {
    throw new NotLeaderError();
  };
  const dispatcher: DispatcherHandlers = {
    SubmitJob: handleUnary(notLeader, silentLogger()),
    ListJobs: handleUnary(notLeader, silentLogger()),
    GetJobStatus: handleUnary(notLeader, silentLogger()),
    CancelJob: handleUnary(notLeader, silentLogger()),
    GetClusterOverview: handleUnary(
      () => (leads ? { jobmaster_id: id, epoch, task_managers: [] } : notLeader()),
      silentLogger(),
    ),
    FetchJobResult: (call) => call.emit('error', toServiceError(new NotLeaderError())),
  };
  const server = new grpc.Server();
  server.addService(loadProto().Dispatcher.service, dispatcher);
  server.addService(loadHealthProto().Health.service, health.handlers());
  const port = await bindServer(server, '127.0.0.1', 0);
  servers.push(server);
  return `127.0.0.1:${port}`;
}

async function runLeader(opts: Partial<LeaderOptions>, env: Record<string, string> = {}): Promise<string> {
  let stdout = '';
  const io: CliIo = { stdout: { write: (s: string) => (stdout += s) }, stderr: { write: () => true }, env, cwd: '/' };
  const code = await leader({ json: false, idOnly: false, timeoutMs: 2_000, ...opts }, io);
  expect(code).toBe(0);
  return stdout;
}

describe('rebound leader', () => {
  it('prints the leader recorded in leader.json, and that it answers', async () => {
    const address = await jobMaster('jobmaster-2', 3, true);
    const dir = haDir({ epoch: 3, jobmasterId: 'jobmaster-2', address, electedAtMs: Date.UTC(2026, 11, 1, 9, 0, 0) });
    expect(JSON.parse(await runLeader({ haDir: dir, json: true }))).toEqual({
      id: 'jobmaster-2',
      address,
      epoch: 3,
      electedAtMs: Date.UTC(2026, 11, 1, 9, 0, 0),
      serving: true,
    });
    expect(await runLeader({ haDir: dir, idOnly: true })).toBe('jobmaster-2\n');
    expect(await runLeader({ haDir: dir })).toBe(
      `jobmaster-2 leads at ${address} (epoch 3, elected 2026-12-01 09:00:00Z)\n`,
    );
  });

  it('finds the HA directory through REBOUND_HA_DIR when no option names the cluster', async () => {
    const address = await jobMaster('jobmaster-1', 1, true);
    const dir = haDir({ epoch: 1, jobmasterId: 'jobmaster-1', address, electedAtMs: 1 });
    expect(await runLeader({}, { [HA_DIR_ENV]: dir })).toMatch(/^jobmaster-1 leads at /);
    // An explicit option wins over the environment.
    const other = haDir({ epoch: 7, jobmasterId: 'jm-other', address, electedAtMs: 1 });
    expect(await runLeader({ haDir: other, idOnly: true }, { [HA_DIR_ENV]: dir })).toBe('jm-other\n');
  });

  it('says when the recorded leader does not answer (it died; the standby has not taken over yet)', async () => {
    const address = await jobMaster('jobmaster-1', 2, true);
    await shutdownServer(servers.pop()!, 100);
    const dir = haDir({ epoch: 2, jobmasterId: 'jobmaster-1', address, electedAtMs: 1 });
    expect(JSON.parse(await runLeader({ haDir: dir, json: true }))).toMatchObject({
      id: 'jobmaster-1',
      serving: false,
    });
    expect(await runLeader({ haDir: dir })).toMatch(/does not answer: it may have died/);
    // --id still names it, so `docker compose kill "$(... leader --id)"` works while it hangs.
    expect(await runLeader({ haDir: dir, idOnly: true })).toBe('jobmaster-1\n');
  });

  it('asks the JobMaster itself with --address', async () => {
    const address = await jobMaster('jm-9', 4, true);
    expect(JSON.parse(await runLeader({ address, json: true }))).toEqual({
      id: 'jm-9',
      address,
      epoch: 4,
      electedAtMs: 0,
      serving: true,
    });
    const standby = await jobMaster('jm-8', 0, false);
    await expect(
      leader(
        { address: standby, json: false, idOnly: false, timeoutMs: 1_000 },
        { stdout: { write: () => true }, stderr: { write: () => true }, env: {}, cwd: '/' },
      ),
    ).rejects.toThrow(/is not the leader/);
  });

  it('fails with one clear line when the HA directory is missing or no JobMaster has been elected yet', async () => {
    const missing = join(haDir(), 'missing');
    await expect(resolveClusterTarget({}, '/', { [HA_DIR_ENV]: missing })).rejects.toThrow(
      new RegExp(`^${HA_DIR_ENV}=${missing}: HA directory .* does not exist`),
    );
    const dir = haDir();
    mkdirSync(join(dir, 'epochs')); // a JobMaster started there, but has not written leader.json yet
    await expect(runLeader({ haDir: dir })).rejects.toThrow(
      /no JobMaster has been elected in .* yet \(no leader.json\)/,
    );
  });
});

describe('rebound leader: parsing and help', () => {
  async function parse(argv: string[]): Promise<{ calls: unknown[]; stdout: string }> {
    let stdout = '';
    const calls: unknown[] = [];
    const handlers = new Proxy({} as CommandHandlers, {
      get: (_t, name) => (opts: unknown) => {
        calls.push({ name, opts });
        return Promise.resolve(0);
      },
    });
    const io: CliIo = {
      stdout: { write: (s: string) => (stdout += s) },
      stderr: { write: () => true },
      env: {},
      cwd: '/',
    };
    expect(await runCli(argv, io, handlers)).toBe(0);
    return { calls, stdout };
  }

  it('maps --id, --json, --timeout and the cluster options', async () => {
    expect((await parse(['leader'])).calls).toEqual([
      { name: 'leader', opts: { json: false, idOnly: false, timeoutMs: 3_000 } },
    ]);
    expect((await parse(['leader', '--id', '--ha-dir', '/ha', '--timeout', '1 s'])).calls).toEqual([
      { name: 'leader', opts: { haDir: '/ha', json: false, idOnly: true, timeoutMs: 1_000 } },
    ]);
  });

  it('documents REBOUND_HA_DIR in --help', async () => {
    expect((await parse(['--help'])).stdout).toMatch(/Environment:\n {2}REBOUND_HA_DIR {2}HA directory of the cluster/);
    expect((await parse(['leader', '--help'])).stdout).toMatch(/default: \$REBOUND_HA_DIR\s+if\s+set/);
  });
});
