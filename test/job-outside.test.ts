import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, runRebound } from './harness.js';

/**
 * A job file in a folder with no package.json and no node_modules above it, through the
 * compiled `rebound` as a user runs it: `@rebound/api` comes from the CLI's own copy.
 */
describe('a job file outside any project', () => {
  let dir: string | undefined;
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('builds its plan with the CLI copy of @rebound/api, and a bad one names file, line and fix', async () => {
    dir = await mkdtemp(join(tmpdir(), 'rebound-outside-it-'));
    expect(dir.startsWith(REPO_ROOT)).toBe(false);
    const job = join(dir, 'wc.ts');
    await mkdir(join(dir, 'in'));
    await writeFile(join(dir, 'in', 'a.txt'), 'one line\n');
    await writeFile(
      job,
      [
        "import { defineJob } from '@rebound/api';",
        "export default defineJob('outside', (env, args) => {",
        '  env.readTextFiles(args[1]!).map((l) => l.length).writeAsText(args[3]!);',
        '});',
        '',
      ].join('\n'),
    );
    const r = await runRebound(['info', job, '--input', join(dir, 'in'), '--output', join(dir, 'out')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^Job outside \(.*wc\.ts\): 1 vertex/);

    const missing = join(dir, 'missing.ts');
    await writeFile(missing, "import _ from 'left-pad-nowhere';\nexport default _;\n");
    const m = await runRebound(['info', missing]);
    expect(m.code).not.toBe(0);
    expect(m.stderr.trim().split('\n')).toHaveLength(1);
    expect(m.stderr).toMatch(
      /missing\.ts:1:\d+: .*package 'left-pad-nowhere' is not installed: run 'npm install left-pad-nowhere'/,
    );
  });
});
