import { createServer, type Server } from 'node:net';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRebound, type CliResult } from './harness.js';
import { makeTempDir } from './util.js';

/** Bad input needs no cluster: exactly one `rebound: ...` line on stderr, no stack trace. */
function expectOneLineError(r: CliResult, code: number, pattern: RegExp): void {
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^rebound: /);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.code, r.stderr).toBe(code);
}

describe.concurrent('rebound: bad input', () => {
  let dir: string;
  let busy: Server;
  let busyPort: number;

  beforeAll(async () => {
    dir = await makeTempDir('rebound-cli-errors-');
    // As in a user's project: an ES module package.
    await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n');
    await writeFile(join(dir, 'not-a-job.ts'), 'export const answer = 42;\n');
    await mkdir(join(dir, 'empty-ha'));
    // Daemons refuse to start without a cluster secret; these tests are about what comes after.
    await writeFile(join(dir, 'secret'), `${'s'.repeat(32)}\n`, { mode: 0o600 });
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
    busyPort = (busy.address() as { port: number }).port;
  });

  afterAll(async () => {
    await new Promise((r) => busy.close(r));
    await rm(dir, { recursive: true, force: true });
  });

  it('missing job file', async () => {
    const r = await runRebound(['submit', join(dir, 'nope.ts'), '--cluster', dir, '--', '--input', 'x']);
    expectOneLineError(r, 1, /job file .*nope\.ts not found/);
  });

  it('a file that does not export a job', async () => {
    const r = await runRebound(['submit', '--cluster', dir, join(dir, 'not-a-job.ts')]);
    expectOneLineError(r, 1, /has no default export; end it with: export default defineJob/);
  });

  it('unknown -D key, before anything is submitted', async () => {
    const r = await runRebound(['submit', '-D', 'no.such.key=1', '--cluster', dir, 'examples/wordcount.ts']);
    expectOneLineError(r, 2, /unknown configuration key 'no\.such\.key'; see 'rebound config'/);
  });

  it('bad duration for local up', async () => {
    const r = await runRebound(['local', 'up', '--workdir', join(dir, 'never'), '-D', 'heartbeat.timeout=soon']);
    expectOneLineError(r, 2, /heartbeat\.timeout: 'soon' is not a duration/);
  });

  it('taskmanager on an empty HA dir', async () => {
    const r = await runRebound([
      'taskmanager',
      '--ha-dir',
      join(dir, 'empty-ha'),
      '--slots',
      '2',
      '--data-dir',
      join(dir, 'data'),
      '-D',
      `security.auth.token-file=${join(dir, 'secret')}`,
    ]);
    expectOneLineError(r, 1, /HA directory .*empty-ha holds neither leader\.json nor epochs\/: .*start a JobMaster/);
  });

  it('unknown job id with no cluster running', async () => {
    const r = await runRebound(['status', '0123456789abcdef0123456789abcdef', '--cluster', join(dir, 'no-cluster')]);
    expectOneLineError(r, 1, /no cluster in .*no-cluster \(no cluster\.json there\); start one with 'rebound local up/);
  });

  it('local commands with no cluster', async () => {
    const none = join(dir, 'no-cluster');
    const r = await runRebound(['local', 'kill-leader', '--workdir', none]);
    // Only --cluster names a local cluster: the hint offers no --ha-dir or --address.
    expect(r.stderr).toBe(
      `rebound: no cluster in ${none} (no cluster.json there); start one with 'rebound local up --cluster ${none}', or pass --cluster with the directory of another\n`,
    );
    expect(r.code).toBe(1);
    for (const cmd of [['local', 'status'], ['local', 'start-jobmaster'], ['config']]) {
      expectOneLineError(
        await runRebound([...cmd, '--cluster', none]),
        1,
        /or pass --cluster with the directory of another$/,
      );
    }
  });

  it('JobMaster port in use', async () => {
    const r = await runRebound([
      'jobmaster',
      '--ha-dir',
      join(dir, 'ha-port'),
      '--id',
      'jm-port',
      '-D',
      `jobmaster.port=${busyPort}`,
      '-D',
      `security.auth.token-file=${join(dir, 'secret')}`,
    ]);
    expectOneLineError(r, 1, new RegExp(`port ${busyPort} on 127\\.0\\.0\\.1 is already in use`));
  });

  it('usage errors exit 2', async () => {
    expectOneLineError(await runRebound(['local', 'up', '--slots', 'many']), 2, /'many' is not a positive integer/);
    expectOneLineError(await runRebound(['frobnicate']), 2, /unknown command 'frobnicate'/);
  });

  it('every command has --help', async () => {
    for (const cmd of [['submit'], ['local', 'up'], ['watch'], ['events'], ['jobmaster']]) {
      const r = await runRebound([...cmd, '--help']);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`Usage: rebound ${cmd.join(' ')}`);
    }
  });
});
