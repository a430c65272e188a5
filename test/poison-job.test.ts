import { readdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, REPO_ROOT, suiteFailed } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

const POISON_JOB = 'test/fixtures/poison-job.ts';

const POISON_RUNTIME = 'packages/chaos/src/jobs/poison-runtime.ts';

/**
 * Poison jobs: job code that exits, throws, hangs, loops or allocates without bound on a
 * JobMaster, at load time or later in its enumerator or coordinator. Before, one that exited
 * killed the leader, then the standby that took it over, until someone deleted the job by hand.
 * Now a job's code on the JobMaster runs in a worker thread of its own: each poison fails its
 * own job with the reason, both JobMasters live on (same processes), and the next job runs. One
 * that still kills JobMasters (a SIGKILL of its whole process) is given up after
 * jobmaster.job-load.max-crashes of them.
 */
describe('poison jobs', () => {
  let cluster: LocalCluster;
  let data: string;
  let input: string;
  let files: string[];

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 2,
      config: {
        'jobmaster.job-module.load-timeout': '5 s',
        'jobmaster.user-code.call-timeout': '2 s',
        'jobmaster.user-code.heap-size': '64 mb',
      },
    });
    data = await makeTempDir('rebound-it-poison-');
    input = join(data, 'in');
    files = await generateTextFiles(input, { files: 2, linesPerFile: 60, seed: 9 });
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function jobMastersAlive(): Promise<boolean[]> {
    const jms = (await cluster.processes()).filter((p) => p.role === 'jobmaster');
    return Promise.all(jms.map((p) => cluster.isAlive(p.id)));
  }

  /** The JobMasters' pids: alive, they are still the processes they were. */
  async function jobMasterPids(): Promise<number[]> {
    return (await cluster.processes()).filter((p) => p.role === 'jobmaster').map((p) => p.pid);
  }

  async function expectWordCountRuns(name: string): Promise<void> {
    const out = join(data, name);
    const r = await cluster.submit('examples/wordcount.ts', ['--input', input, '--output', out], {
      wait: true,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
  }

  it.each([
    ['exit', /the job module exited its process \(exit code 7\) while loading/],
    ['throw', /poisoned while building/],
    ['hang', /did not finish loading within 5000 ms \(jobmaster\.job-module\.load-timeout\)/],
  ])('a module that does %s at load fails its job, and every JobMaster stays alive', async (mode, reason) => {
    const r = await cluster.rebound([
      'submit',
      resolve(REPO_ROOT, POISON_JOB),
      '--',
      '--poison',
      mode,
      '--input',
      input,
      '--output',
      join(data, `out-${mode}`),
    ]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(reason);
    expect(await jobMastersAlive()).toEqual([true, true]);
    const list = JSON.parse((await cluster.rebound(['list', '--json'])).stdout) as {
      jobs: { name: string; state: string }[];
    };
    expect(list.jobs.filter((j) => j.name === 'poison').every((j) => j.state === 'FAILED')).toBe(true);
    await expectWordCountRuns(`good-after-${mode}`);
  });

  it('a module that exits only on a JobMaster main thread no longer harms it: the job runs', async () => {
    const pids = await jobMasterPids();
    const out = join(data, 'out-exit-main');
    const r = await cluster.submit(POISON_JOB, ['--poison', 'exit-main', '--input', input, '--output', out], {
      wait: true,
      timeoutMs: 120_000,
    });
    expect(r.code, r.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(out))).toEqual([]);
    expect(await jobMasterPids()).toEqual(pids);
    expect(await jobMastersAlive()).toEqual([true, true]);
  });

  it.each([
    ['timer-throw', /user code on the JobMaster crashed: .*chaos poison: the enumerator threw from a timer/],
    ['split-exit', /user code on the JobMaster called process\.exit\(3\)/],
    [
      'coordinator-loop',
      // The watchdog finds the loop, or a call the JobMaster waits on while it loops (a reset).
      /user code on the JobMaster (stopped answering for \d+ ms|did not return from \w+ within \d+ ms) \(jobmaster\.user-code\.call-timeout/,
    ],
    ['split-alloc', /user code on the JobMaster ran out of its heap \(jobmaster\.user-code\.heap-size 64 MiB\)/],
  ])('an enumerator or coordinator that does %s fails its job; the JobMasters live on', async (mode, reason) => {
    const pids = await jobMasterPids();
    const r = await cluster.submit(POISON_RUNTIME, ['--poison', mode, '--output', join(data, `out-${mode}`)], {
      wait: true,
      timeoutMs: 120_000,
    });
    expect(r.code).not.toBe(0);
    const status = await cluster.status(r.jobId);
    expect(status.state).toBe('FAILED');
    expect(status.failure).toMatch(reason);
    expect(await jobMasterPids()).toEqual(pids);
    expect(await jobMastersAlive()).toEqual([true, true]);
    await expectWordCountRuns(`good-after-${mode}`);
  });

  it('a module that kills its JobMaster from the worker is failed after max-crashes of them', async () => {
    const jobsDir = join(cluster.haDir, 'jobs');
    const before = new Set(await readdir(jobsDir));
    // A SIGKILL of the whole process, from the user-code worker: the leader, then the standby.
    await cluster.rebound([
      'submit',
      resolve(REPO_ROOT, POISON_JOB),
      '--detached',
      '--',
      '--poison',
      'kill-process',
      '--input',
      input,
      '--output',
      join(data, 'out-kill'),
    ]);
    const jobId = (await readdir(jobsDir)).find((id) => !before.has(id));
    expect(jobId).toBeDefined();
    await cluster.waitFor(
      async () => (await jobMastersAlive()).every((alive) => !alive),
      90_000,
      'the poison job to take both JobMasters down',
    );

    // A third JobMaster finds two load attempts that never finished: it fails the job unloaded.
    const jm = (await cluster.processes()).find((p) => p.role === 'jobmaster')!;
    await cluster.startJobMaster({ id: jm.id });
    const failed = await cluster.waitForJob(jobId!, 90_000, ['FAILED']);
    expect(failed.failure).toMatch(
      /was not loaded again: 2 JobMaster\(s\) in a row died while loading it \(jobmaster\.job-load\.max-crashes=2\)/,
    );
    expect(await cluster.isAlive(jm.id)).toBe(true);
    await expectWordCountRuns('good-after-kill-process');
  });
});
