import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalCluster, REBOUND_BIN, REPO_ROOT, runRebound, suiteFailed } from './harness.js';
import { makeTempDir, readSinkLines } from './util.js';

const exec = promisify(execFile);

/** A command of the scaffold's README, in the project directory; its output on failure. */
async function inProject(dir: string, cmd: string, args: string[]): Promise<string> {
  try {
    const { stdout } = await exec(cmd, args, { cwd: dir, timeout: 120_000, env: { ...process.env, CI: '1' } });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}\n${e.stderr ?? ''}`);
  }
}

/** A newcomer's own job: `rebound init` in a folder outside the checkout, its test, then `rebound run`. */
describe('rebound init: a job project outside the repository', () => {
  let parent: string;
  let cluster: LocalCluster | undefined;

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (parent && !suiteFailed(suite)) await rm(parent, { recursive: true, force: true });
  });

  it('scaffolds, tests in one process, type-checks and submits as the README says', async () => {
    parent = await makeTempDir('rebound-init-it-');
    expect(parent.startsWith(REPO_ROOT)).toBe(false);
    const dir = join(parent, 'wc');

    const created = await runRebound(['init', dir]);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toBe(
      [
        `created the job project wc in ${dir}: package.json, tsconfig.json, job.ts, job.test.ts, README.md`,
        'try it, then submit it (see its README.md):',
        `  cd ${dir}`,
        '  npm install --offline',
        '  npm test',
        '  npx rebound local up && npx rebound run job.ts --input <dir of text files> --output <dir>',
        '',
      ].join('\n'),
    );
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('npm install --offline');
    expect(readme).toContain(`(\`node ${REBOUND_BIN}\`)`);

    // The README's first two commands: links only (no network), then the runLocally test.
    await inProject(dir, 'npm', ['install', '--offline', '--no-audit', '--no-fund']);
    expect(await inProject(dir, 'npm', ['test'])).toMatch(/1 passed/);
    // What an editor shows: the project type-checks against the linked @rebound/api.
    await inProject(dir, process.execPath, [join(REPO_ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.']);

    // Then `rebound run job.ts --input … --output …`, everything after the job file for the job.
    await mkdir(join(dir, 'in'));
    await writeFile(join(dir, 'in', 'a.txt'), 'to be or not to be\n');
    cluster = await LocalCluster.start({ jobmasters: 1, taskmanagers: 1, slots: 2 });
    // The project's own `npx rebound` (a link to this checkout that `npm install` made).
    const stdout = await inProject(dir, 'npx', [
      'rebound',
      'run',
      '--cluster',
      cluster.workdir,
      'job.ts',
      '--input',
      join(dir, 'in'),
      '--output',
      join(dir, 'out'),
    ]);
    // Exact, with the job id and the run time in placeholders. Between the first line and the
    // last two is one line per change `run` saw while following the job: how many depends on
    // timing; each must be a progress line of this job's two vertices.
    const jobId = /^submitted job wc as ([0-9a-f]{32})\n/.exec(stdout)?.[1];
    expect(jobId, stdout).toBeDefined();
    const lines = stdout
      .replaceAll(jobId!, '<job-id>')
      .replace(/ FINISHED in (\d+ ms|\d+\.\d s|\d+ min( \d+ s)?)\n$/, ' FINISHED in <duration>\n')
      .split('\n');
    expect(lines[0]).toBe('submitted job wc as <job-id>');
    expect(lines.slice(-3)).toEqual([
      'job <job-id> FINISHED 2/2 tasks | Source: TextFiles -> FlatMap -> Map 1/1 FINISHED | Sum(1) -> Sink: TextFiles 1/1 FINISHED',
      'job <job-id> FINISHED in <duration>',
      '',
    ]);
    const state = '(CREATED|SCHEDULED|DEPLOYING|RUNNING|FINISHED)';
    const progress = new RegExp(
      `^job <job-id> (CREATED|RUNNING) [0-2]/[0-2]\\+? tasks \\| Source: TextFiles -> FlatMap -> Map [01]/1 ${state} \\| Sum\\(1\\) -> Sink: TextFiles [01]/[1?] ${state}$`,
    );
    for (const line of lines.slice(1, -3)) expect(line).toMatch(progress);
    expect((await readSinkLines(join(dir, 'out'))).sort()).toEqual(['be\t2', 'not\t1', 'or\t1', 'to\t2']);
  });
});
