import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  ErrorCode,
  JobNotFoundError,
  NotLeaderError,
  UnavailableError,
  toServiceError,
  bindServer,
  handleUnary,
  silentLogger,
  loadProto,
  shutdownServer,
  type DispatcherHandlers,
  type JobStatus,
} from '@rebound/core';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { ClusterClient, type LeaderAddress } from './client.js';
import { resolveClusterTarget } from './cluster-target.js';
import { followJob } from './follow.js';
import { PlainProgress } from './progress.js';

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const servers: grpc.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => shutdownServer(s, 100)));
});

/** A Dispatcher on 127.0.0.1:0 that leads while `leads()` says so. */
async function dispatcher(
  leads: () => boolean,
  statuses: JobStatus[] = [],
): Promise<{ address: string; calls: () => number }> {
  let calls = 0;
  const guard = (): void => {
    calls++;
    if (!leads()) throw new NotLeaderError();
  };
  let i = 0;
  const handlers: DispatcherHandlers = {
    SubmitJob: handleUnary((req) => (guard(), { job_id: req.job_graph?.job_id ?? '' }), silentLogger()),
    ListJobs: handleUnary(() => (guard(), { jobs: [] }), silentLogger()),
    GetJobStatus: handleUnary((req) => {
      guard();
      if (req.job_id === 'missing') throw new JobNotFoundError(req.job_id);
      return statuses[Math.min(i++, statuses.length - 1)] ?? { job_id: req.job_id, state: 'RUNNING' };
    }, silentLogger()),
    CancelJob: handleUnary(() => (guard(), { state: 'CANCELLING' }), silentLogger()),
    GetClusterOverview: handleUnary(
      () => (guard(), { jobmaster_id: 'jm', epoch: 1, task_managers: [] }),
      silentLogger(),
    ),
    FetchJobResult: (call) => call.emit('error', toServiceError(new NotLeaderError())),
  };
  return { address: await serve(handlers), calls: () => calls };
}

/** Serves `handlers` as the Dispatcher on 127.0.0.1:0, stopped after the test; returns its address. */
async function serve(handlers: grpc.UntypedServiceImplementation): Promise<string> {
  const server = new grpc.Server();
  server.addService(loadProto().Dispatcher.service, handlers);
  const port = await bindServer(server, '127.0.0.1', 0);
  servers.push(server);
  return `127.0.0.1:${port}`;
}

function haDirWithLeader(): {
  haDir: string;
  setLeader: (epoch: number, jobmasterId: string, address: string) => void;
} {
  const haDir = tempDir('rebound-client-');
  const setLeader = (epoch: number, jobmasterId: string, address: string): void =>
    writeFileSync(join(haDir, 'leader.json'), JSON.stringify({ epoch, jobmasterId, address, electedAtMs: Date.now() }));
  return { haDir, setLeader };
}

const fast = { rpcTimeoutMs: 1_000, failoverTimeoutMs: 5_000, initialBackoffMs: 10, maxBackoffMs: 20 };

describe('ClusterClient', () => {
  it('follows leader.json when the JobMaster it calls is no longer the leader', async () => {
    let aLeads = true;
    let refusals = 0;
    const { haDir, setLeader } = haDirWithLeader();
    const b = await dispatcher(() => !aLeads);
    const a = await dispatcher(() => {
      // leader.json still names jm-a for a while: the client must retry, then switch to jm-b.
      if (!aLeads && ++refusals === 2) setLeader(2, 'jm-b', b.address);
      return aLeads;
    });
    setLeader(1, 'jm-a', a.address);
    const changes: LeaderAddress[] = [];
    const client = new ClusterClient({ kind: 'ha', haDir }, { ...fast, onLeaderChange: (l) => changes.push(l) });
    try {
      expect(await client.listJobs()).toEqual([]);
      aLeads = false;
      expect(await client.cancelJob('j')).toBe('CANCELLING');
      expect(await client.cancelJob('j')).toBe('CANCELLING');
      expect(changes).toEqual([{ address: b.address, epoch: 2, jobmasterId: 'jm-b' }]);
      expect(refusals).toBe(2);
      expect(client.currentLeader()?.epoch).toBe(2);
    } finally {
      client.close();
    }
  });

  it('does not retry errors other than unavailability', async () => {
    const a = await dispatcher(() => true);
    const client = new ClusterClient({ kind: 'address', address: a.address }, fast);
    try {
      await expect(client.getJobStatus('missing')).rejects.toMatchObject({
        code: ErrorCode.JOB_NOT_FOUND,
        message: expect.stringContaining('no job with id missing'),
      });
      expect(a.calls()).toBe(1);
    } finally {
      client.close();
    }
  });

  it('with --address, a non-leader is an error naming the fix', async () => {
    const a = await dispatcher(() => false);
    const client = new ClusterClient({ kind: 'address', address: a.address }, fast);
    try {
      await expect(client.listJobs()).rejects.toThrow(
        `the JobMaster at ${a.address} is not the leader; use --ha-dir or --cluster`,
      );
    } finally {
      client.close();
    }
  });

  it('gives up after the failover budget with one clear message', async () => {
    const { haDir, setLeader } = haDirWithLeader();
    setLeader(3, 'jm-x', '127.0.0.1:1');
    const client = new ClusterClient({ kind: 'ha', haDir }, { ...fast, failoverTimeoutMs: 200 });
    try {
      await expect(client.listJobs()).rejects.toThrow(
        /ListJobs: the leader jm-x \(epoch 3\) at 127.0.0.1:1 did not answer within 0.2 s/,
      );
    } finally {
      client.close();
    }
  });

  it('waits for a first leader, and says when none was elected', async () => {
    const haDir = tempDir('rebound-client-');
    const client = new ClusterClient({ kind: 'ha', haDir }, { ...fast, failoverTimeoutMs: 100 });
    try {
      await expect(client.listJobs()).rejects.toMatchObject({
        code: ErrorCode.LEADER_NOT_FOUND,
        message: expect.stringContaining('no JobMaster was elected leader'),
      });
    } finally {
      client.close();
    }
  });
});

describe('ClusterClient.fetchJobResult', () => {
  it('delivers what a broken stream held before it retries: each byte once, in order, one at a time', async () => {
    const content = Buffer.from(Array.from({ length: 300 }, (_, i) => `row ${i}\n`).join(''));
    const chunkBytes = 100;
    let calls = 0;
    let brokeFirst!: () => void;
    const firstBroken = new Promise<void>((r) => (brokeFirst = r));
    let secondCall!: () => void;
    const retried = new Promise<void>((r) => (secondCall = r));
    const handlers: Pick<DispatcherHandlers, 'FetchJobResult'> = {
      FetchJobResult: (call) => {
        const first = ++calls === 1;
        if (!first) secondCall();
        for (let at = call.request.offset, n = 0; at < content.length; at += chunkBytes, n++) {
          // The first stream breaks after ten chunks, the way a killed leader's does.
          if (first && n === 10) {
            call.emit('error', toServiceError(new UnavailableError('the leader is gone')));
            brokeFirst();
            return;
          }
          const data = content.subarray(at, at + chunkBytes);
          call.write({ file_index: 0, offset: at, data, end_of_file: at + data.length >= content.length });
        }
        call.end();
      },
    };
    const { haDir, setLeader } = haDirWithLeader();
    setLeader(1, 'jm-a', await serve(handlers));
    const client = new ClusterClient({ kind: 'ha', haDir }, fast);
    const received: Buffer[] = [];
    let active = 0;
    let overlapped = false;
    try {
      await client.fetchJobResult(
        'j',
        async (data) => {
          overlapped ||= active > 0;
          active++;
          received.push(data);
          // The consumer is busy on the third chunk when the stream breaks; a retry must wait for it.
          if (received.length === 3) {
            await firstBroken;
            await Promise.race([retried, new Promise((r) => setTimeout(r, 300))]);
          }
          active--;
        },
        { streamTimeoutMs: 5_000, maxChunkBytes: chunkBytes },
      );
    } finally {
      client.close();
    }
    expect(overlapped).toBe(false);
    expect(calls).toBe(2);
    expect(Buffer.concat(received).equals(content)).toBe(true);
  });
});

describe('resolveClusterTarget', () => {
  it('fails at once without a cluster or with an empty HA dir', async () => {
    const dir = tempDir('rebound-target-');
    await expect(resolveClusterTarget({ cluster: dir })).rejects.toThrow(
      /no cluster in .*; start one with 'rebound local up/,
    );
    await expect(resolveClusterTarget({ haDir: dir })).rejects.toMatchObject({ code: ErrorCode.HA_DIR_INVALID });
    await expect(resolveClusterTarget({ address: 'nonsense' })).rejects.toThrow(/expected HOST:PORT/);
    expect(await resolveClusterTarget({ address: 'h:1', haDir: dir })).toEqual({ kind: 'address', address: 'h:1' });
  });
});

describe('followJob', () => {
  it('reports every change until the job is terminal', async () => {
    const a = await dispatcher(
      () => true,
      [
        { job_id: 'j', state: 'CREATED' },
        { job_id: 'j', state: 'RUNNING' },
        { job_id: 'j', state: 'RUNNING' },
        { job_id: 'j', state: 'RECONCILING' },
        { job_id: 'j', state: 'FINISHED' },
      ],
    );
    const client = new ClusterClient({ kind: 'address', address: a.address }, fast);
    let out = '';
    try {
      const final = await followJob(client, 'j', new PlainProgress({ write: (t: string) => (out += t) }), {
        pollIntervalMs: 1,
        reconnectTimeoutMs: 1_000,
      });
      expect(final.state).toBe('FINISHED');
      expect(
        out
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('job '))
          .map((l) => l.split(' ')[2]),
      ).toEqual(['CREATED', 'RUNNING', 'RECONCILING', 'FINISHED']);
    } finally {
      client.close();
    }
  });

  it('observes a failover poll by poll: lost, new leader, loading, RECONCILING, finished', async () => {
    const { haDir, setLeader } = haDirWithLeader();
    const v = (finished: number, state = 'RUNNING') => ({
      id: 'v',
      name: 'Source',
      parallelism: 4,
      state,
      tasks: { finished },
    });
    const b = await dispatcher(
      () => true,
      [
        { job_id: 'j', state: 'CREATED', leader_epoch: 2 },
        { job_id: 'j', state: 'RECONCILING', leader_epoch: 2, vertices: [v(2)] },
        { job_id: 'j', state: 'FINISHED', leader_epoch: 2, vertices: [v(4, 'FINISHED')] },
      ],
    );
    let aCalls = 0;
    const a = await dispatcher(() => {
      aCalls++;
      // After two refused polls, a standby is elected.
      if (aCalls === 7) setLeader(2, 'jm-b', b.address);
      return aCalls <= 4;
    }, [
      { job_id: 'j', state: 'RUNNING', leader_epoch: 1, vertices: [v(1)] },
      { job_id: 'j', state: 'RUNNING', leader_epoch: 1, vertices: [v(2)] },
    ]);
    setLeader(1, 'jm-a', a.address);
    const client = new ClusterClient({ kind: 'ha', haDir }, fast);
    let out = '';
    try {
      const final = await followJob(client, 'j', new PlainProgress({ write: (t: string) => (out += t) }), {
        pollIntervalMs: 1,
        reconnectTimeoutMs: 5_000,
      });
      expect(final.state).toBe('FINISHED');
    } finally {
      client.close();
    }
    const lines = out
      .trim()
      .split('\n')
      .map((l) => l.replace(/\d+(\.\d+)? m?s after/, 'T after').replace(/127\.0\.0\.1:\d+/, 'ADDR'));
    expect(lines).toEqual([
      'job j RUNNING 1/4 tasks | Source 1/4 RUNNING',
      'job j RUNNING 2/4 tasks | Source 2/4 RUNNING',
      'leader lost: jm-a (epoch 1) stopped answering; waiting for a standby to take over',
      'leader changed: epoch 2 at ADDR (jm-b), T after the last answer of the old leader',
      'jm-b (epoch 2) is loading the job from the JobGraphStore',
      "RECONCILING under jm-b (epoch 2): replaying the job's event log and asking the TaskManagers which partitions they kept",
      'job j RECONCILING 2/4 tasks | Source 2/4 RUNNING',
      'job j FINISHED 4/4 tasks | Source 4/4 FINISHED',
    ]);
  });

  it('reports the leader change of a failover already under way when it starts', async () => {
    const { haDir, setLeader } = haDirWithLeader();
    const b = await dispatcher(
      () => true,
      [
        { job_id: 'j', state: 'RUNNING', leader_epoch: 2 },
        { job_id: 'j', state: 'FINISHED', leader_epoch: 2 },
      ],
    );
    let n = 0;
    const a = await dispatcher(() => {
      if (++n === 2) setLeader(2, 'jm-b', b.address);
      return false;
    });
    setLeader(1, 'jm-a', a.address);
    const client = new ClusterClient({ kind: 'ha', haDir }, fast);
    let out = '';
    try {
      await followJob(client, 'j', new PlainProgress({ write: (t: string) => (out += t) }), {
        pollIntervalMs: 1,
        reconnectTimeoutMs: 5_000,
      });
    } finally {
      client.close();
    }
    expect(out).toMatch(/^leader changed: epoch 2 at 127\.0\.0\.1:\d+ \(jm-b\)\njob j RUNNING/);
  });

  it('fails at once for a job the leader never knew', async () => {
    const a = await dispatcher(() => true);
    const client = new ClusterClient({ kind: 'address', address: a.address }, fast);
    try {
      await expect(
        followJob(client, 'missing', new PlainProgress({ write: () => true }), {
          pollIntervalMs: 1,
          reconnectTimeoutMs: 1_000,
        }),
      ).rejects.toMatchObject({
        code: ErrorCode.JOB_NOT_FOUND,
      });
    } finally {
      client.close();
    }
  });
});
