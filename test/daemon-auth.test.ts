import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REBOUND_BIN, REPO_ROOT, runRebound, type CliResult } from './harness.js';
import { makeTempDir } from './util.js';

/** One `rebound: ...` line on stderr and a non-zero exit: what a refused start must look like. */
function expectRefused(r: CliResult, pattern: RegExp): void {
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(r.code, r.stderr).toBe(1);
}

/**
 * Closed unless you say otherwise (issue 25, item 2): a JobMaster or TaskManager started by hand
 * without security.auth.token-file refuses to start; security.auth.allow-unauthenticated lets it
 * run on loopback only, with a warning at every start.
 */
describe.concurrent('daemons started by hand: no secret, no daemon', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('rebound-daemon-auth-');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const open = ['-D', 'security.auth.allow-unauthenticated=true'];
  const tm = (name: string): string[] => [
    'taskmanager',
    '--ha-dir',
    join(dir, `${name}-ha`),
    '--slots',
    '1',
    '--data-dir',
    join(dir, `${name}-data`),
  ];
  const jm = (name: string): string[] => ['jobmaster', '--ha-dir', join(dir, `${name}-ha`), '-D', 'rest.port=0'];

  it('a JobMaster without a secret refuses to start, naming the fix', async () => {
    expectRefused(
      await runRebound(jm('jm-none')),
      /^rebound: jobmaster refuses to start without a cluster secret: set security\.auth\.token-file .*security\.auth\.allow-unauthenticated=true/,
    );
  });

  it('a TaskManager without a secret refuses to start, naming the fix', async () => {
    expectRefused(
      await runRebound(tm('tm-none')),
      /^rebound: taskmanager refuses to start without a cluster secret: set security\.auth\.token-file/,
    );
  });

  it('a shuffle worker without a secret refuses to start and claims no data directory', async () => {
    const data = join(dir, 'sw-none-data');
    const sw = ['shuffle-worker', '--ha-dir', join(dir, 'sw-none-ha'), '--data-dir', data];
    expectRefused(
      await runRebound([...sw, '--id', 'sw-1']),
      /^rebound: shuffle-worker refuses to start without a cluster secret: set security\.auth\.token-file/,
    );
    // Refused before it could announce a partition: another id may still use the directory.
    await expect(readFile(join(data, 'worker-id'), 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('allow-unauthenticated does not open a JobMaster gRPC port beyond loopback', async () => {
    expectRefused(
      await runRebound([...jm('jm-wild'), ...open, '-D', 'jobmaster.bind-host=0.0.0.0']),
      /^rebound: jobmaster refuses to bind jobmaster\.bind-host=0\.0\.0\.0 without a cluster secret/,
    );
  });

  it('allow-unauthenticated does not open the REST API beyond loopback', async () => {
    expectRefused(
      await runRebound([...jm('jm-rest'), ...open, '-D', 'rest.bind-address=0.0.0.0']),
      /^rebound: jobmaster refuses to bind rest\.bind-address=0\.0\.0\.0 without a cluster secret/,
    );
  });

  it('allow-unauthenticated does not open a TaskManager beyond loopback', async () => {
    expectRefused(
      await runRebound([...tm('tm-wild'), ...open, '-D', 'taskmanager.bind-host=0.0.0.0']),
      /^rebound: taskmanager refuses to bind taskmanager\.bind-host=0\.0\.0\.0 without a cluster secret/,
    );
  });

  it('allow-unauthenticated on loopback: the JobMaster runs and warns at every start', async () => {
    const logFile = join(dir, 'jm-open.log');
    for (let start = 1; start <= 2; start++) {
      const child = spawn(process.execPath, [REBOUND_BIN, ...jm('jm-open'), ...open, '--log-file', logFile], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
      const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
      try {
        // Bounded: the ready line, or the process's exit, or 60 s on a loaded machine.
        const ready = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(false), 60_000);
          let out = '';
          child.stdout.setEncoding('utf8').on('data', (d: string) => {
            out += d;
            if (out.includes('"event":"ready"')) {
              clearTimeout(timer);
              resolve(true);
            }
          });
          child.on('close', () => {
            clearTimeout(timer);
            resolve(false);
          });
        });
        expect(ready, stderr).toBe(true);
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
      } finally {
        child.kill('SIGKILL');
      }
      const warnings = (await readFile(logFile, 'utf8'))
        .split('\n')
        .filter((l) => l.includes('"event":"security.unauthenticated"'));
      expect(warnings).toHaveLength(start);
      expect(warnings[start - 1]).toContain('jobmaster runs WITHOUT authentication');
    }
  });
});
