import { spawn } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REBOUND_BIN, REPO_ROOT, runRebound, waitFor } from './harness.js';
import { makeTempDir } from './util.js';

/**
 * A start-up step that never finishes, for real: on Node 20 a recursive mkdir under /proc/1 never
 * returns (it loops in the thread pool). That is the "--ha-dir on an unusable path" a user can
 * type, and it is what made a daemon spin a core and ignore SIGTERM.
 */
const HANGING_HA_DIR = '/proc/1/rebound-ha';

describe('daemon lifecycle: a start-up that hangs', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('rebound-daemon-lifecycle-');
    // Daemons refuse to start without a cluster secret; these tests are about what comes after.
    await writeFile(join(dir, 'secret'), `${'s'.repeat(32)}\n`, { mode: 0o600 });
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('exits non-zero on SIGTERM within the shutdown timeout, without a ready line', async () => {
    const logFile = join(dir, 'sigterm.log');
    const child = spawn(
      process.execPath,
      [
        REBOUND_BIN,
        'jobmaster',
        '--ha-dir',
        HANGING_HA_DIR,
        '-D',
        'rest.port=0',
        '-D',
        `security.auth.token-file=${join(dir, 'secret')}`,
        '--shutdown-timeout',
        '2 s',
        '--log-file',
        logFile,
      ],
      {
        cwd: REPO_ROOT,
        // The start-up line is a debug line: it must not add to the one-line errors on stderr.
        env: { ...process.env, REBOUND_LOG_LEVEL: 'debug' },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.on('close', (code, signal) => r({ code, signal })),
    );
    try {
      // Its signal handlers are installed before it logs that it is starting: stop it then.
      await waitFor(
        async () => (await readFile(logFile, 'utf8').catch(() => '')).includes('"daemon.starting"'),
        30_000,
        'the jobmaster to log that it is starting',
      );
      child.kill('SIGTERM');
      // Bounded: the shutdown timeout (2 s) plus process teardown; a daemon that ignores SIGTERM
      // would be SIGKILLed by the finally below and fail the assertion on its exit code.
      const result = await Promise.race([exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 30_000))]);
      expect(result, stderr).not.toBe('hung');
      expect(result).toEqual({ code: 1, signal: null });
      expect(stdout).not.toContain('"ready"');
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('fails with one line naming cluster.startup.timeout when nothing stops it', async () => {
    const r = await runRebound(
      [
        'jobmaster',
        '--ha-dir',
        HANGING_HA_DIR,
        '-D',
        'cluster.startup.timeout=1 s',
        // Not the default 8081: the JobMaster the test before killed may still hold it.
        '-D',
        'rest.port=0',
        '-D',
        `security.auth.token-file=${join(dir, 'secret')}`,
        '--log-file',
        join(dir, 'deadline.log'),
      ],
      { timeoutMs: 60_000 },
    );
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code).toBe(1);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^rebound: jobmaster did not finish starting within 1\.0 s \(cluster\.startup\.timeout\); check that its --ha-dir and --data-dir are usable/,
    );
  });

  it('refuses an out-of-range value with one line naming the key and the range', async () => {
    const r = await runRebound(['jobmaster', '--ha-dir', '/tmp/never-used', '-D', 'heartbeat.timeout=0']);
    expect(r.code).toBe(2); // a usage error, like every bad -D
    expect(r.stderr.trimEnd()).toBe(
      "rebound: -D heartbeat.timeout: '0' is out of range; use a value from 1 ms to 24 d",
    );
  });
});
