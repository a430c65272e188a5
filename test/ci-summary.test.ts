import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTempDir } from './util.js';

/**
 * .ci/run's last line (.ci/summary.sh): whatever ends the run, it names each suite that ran, failed,
 * was skipped (with the reason) or was never reached. Each case is a stub run: the real helpers,
 * sourced the way .ci/run sources them, around suites that are `true`, `false` or a script.
 */
const REPO = fileURLToPath(new URL('..', import.meta.url));
const SUMMARY = join(REPO, '.ci/summary.sh');

interface Outcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly lastLine: string;
}

function lastLine(text: string): string {
  return text.trimEnd().split('\n').at(-1) ?? '';
}

describe('.ci/run summary line', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await makeTempDir('rebound-ci-summary-');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  /** Runs `body` as a CI script would: bash, set -euo pipefail, the helpers sourced. */
  function ciRun(body: string, onStart?: (pid: number) => void): Promise<Outcome> {
    const script = `set -euo pipefail\nsource '${SUMMARY}'\n${body}\n`;
    return new Promise((resolve, reject) => {
      const child = spawn('bash', ['-c', script], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
      child.stderr.resume();
      child.on('error', reject);
      child.on('close', (code, signal) => resolve({ code, signal, lastLine: lastLine(out) }));
      if (child.pid !== undefined) onStart?.(child.pid);
    });
  }

  it('names a failed suite as failed and the ones after it as not run, keeping the exit code', async () => {
    const run = await ciRun(`
ci_plan "npm test" "test:chaos" "test:etcd"
ci_step lint true
ci_skip "test/dashboard.test.ts" "chromium not installable"
ci_suite "npm test" true
ci_suite "test:chaos" sh -c 'exit 3'
ci_suite "test:etcd" true`);
    expect(run.code).toBe(3);
    expect(run.lastLine).toBe(
      'suites: test/dashboard.test.ts skipped (chromium not installable); npm test ran; test:chaos failed (exit 3); test:etcd not run',
    );
  });

  it('names a check that failed before any suite, and every suite as not run', async () => {
    const run = await ciRun(`
ci_plan "npm test" "test:chaos"
ci_step typecheck true
ci_step lint sh -c 'exit 2'
ci_suite "npm test" true`);
    expect(run.code).toBe(2);
    expect(run.lastLine).toBe('suites: lint failed (exit 2); npm test not run; test:chaos not run');
  });

  it('names a failure outside any suite or check', async () => {
    const run = await ciRun(`
ci_plan "npm test"
ci_suite "npm test" true
false`);
    expect(run.code).toBe(1);
    expect(run.lastLine).toBe('suites: npm test ran; the run failed (exit 1) outside any suite');
  });

  it('lists every suite of a run that passed, skips with their reason', async () => {
    const run = await ciRun(`
ci_plan "npm test" "test:etcd" "test:netns"
ci_suite "npm test" true
ci_skip "test:etcd partition runs" "not root (nft and cgroups need CAP_NET_ADMIN and CAP_SYS_ADMIN)"
ci_suite "test:etcd" true
ci_skip "test:netns" "not root"
echo "a line of the run's own"`);
    expect(run.code).toBe(0);
    expect(run.lastLine).toBe(
      'suites: npm test ran; test:etcd partition runs skipped (not root (nft and cgroups need CAP_NET_ADMIN and CAP_SYS_ADMIN)); test:etcd ran; test:netns skipped (not root)',
    );
  });

  it('skips a suite whose tools cannot run here (exit 1) and fails the run when they are broken (exit 2)', async () => {
    const ensure = async (name: string, code: number, line: string): Promise<string> => {
      const path = join(dir, name);
      await writeFile(path, `echo "ensure-x: installing nothing"\necho "ensure-x: ${line}" >&2\nexit ${code}\n`);
      return path;
    };
    const cannot = await ensure('cannot.sh', 1, 'X cannot run here: no cgroup filesystem is mounted');
    const broken = await ensure('broken.sh', 2, 'X is installed but does not work: dockerd exited: bad config');
    const works = await ensure('works.sh', 0, 'unused');
    const run = await ciRun(`
ci_plan "test:netns" "test:compose" "test:last"
if ci_ensure "test:netns" '${cannot}'; then ci_suite "test:netns" true; fi
if ci_ensure "test:compose" '${broken}'; then ci_suite "test:compose" true; fi
if ci_ensure "test:last" '${works}'; then ci_suite "test:last" true; fi`);
    expect(run.code).toBe(2);
    expect(run.lastLine).toBe(
      'suites: test:netns skipped (X cannot run here: no cgroup filesystem is mounted); ' +
        'test:compose failed (exit 2: X is installed but does not work: dockerd exited: bad config); test:last not run',
    );
  });

  it('still prints the line when the run is stopped by SIGTERM mid-suite', async () => {
    const started = join(dir, 'started');
    const run = await ciRun(
      `
ci_plan "npm test" "test:chaos"
ci_suite "npm test" sh -c 'touch "${started}"; exec sleep 60'
ci_suite "test:chaos" true`,
      (pid) => {
        const poll = setInterval(() => {
          if (!existsSync(started)) return;
          clearInterval(poll);
          process.kill(-pid, 'SIGTERM'); // the whole group, as a CI runner cancelling a job does
        }, 50);
      },
    );
    expect(run.code).toBe(143);
    expect(run.lastLine).toBe('suites: npm test failed (exit 143); test:chaos not run');
  });

  it('.ci/run plans every suite it runs, so one never reached is named', () => {
    const ciRunText = readFileSync(join(REPO, '.ci/run'), 'utf8');
    const names = (text: string, re: RegExp): string[] => [...text.matchAll(re)].map((m) => m[1]!);
    const planned = names(/^ci_plan (.*)$/m.exec(ciRunText)?.[1] ?? '', /"([^"]+)"/g);
    const suites = names(ciRunText, /^\s*(?:if ci_ensure |ci_suite )"([^"]+)"/gm);
    expect(suites.length).toBeGreaterThanOrEqual(6);
    expect(new Set(suites)).toEqual(new Set(planned));
    expect(ciRunText).toMatch(/^source \.ci\/summary\.sh$/m);
  });
});
