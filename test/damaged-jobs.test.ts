import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedNumbered } from './fixtures/numbered-source.js';
import { LocalCluster, suiteFailed } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

/**
 * One job directory with garbage files in the HA directory used to make ListJobs and a new
 * leader's takeover of *all* jobs fail. Now the damaged jobs are listed with the reason and
 * skipped, and every other job is served and recovered.
 */
describe('damaged job directories', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 2, taskmanagers: 2, slots: 2 });
    data = await makeTempDir('rebound-it-damaged-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('are listed with the reason while a healthy job is taken over by the next leader', async () => {
    const first = await generateTextFiles(join(data, 'in1'), { files: 2, linesPerFile: 50, seed: 1 });
    const done = await cluster.submit(
      'examples/wordcount.ts',
      ['--input', join(data, 'in1'), '--output', join(data, 'out1')],
      { wait: true },
    );
    expect(done.code, done.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(first), await readSinkOutput(join(data, 'out1')))).toEqual([]);

    // Damage: the finished job's status file torn, and a job directory whose graph is garbage.
    const jobsDir = join(cluster.haDir, 'jobs');
    await writeFile(join(jobsDir, done.jobId, 'status.json'), '{"state":"FINI');
    await mkdir(join(jobsDir, 'garbage-job'), { recursive: true });
    await writeFile(join(jobsDir, 'garbage-job', 'jobgraph.pb'), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));

    const out = join(data, 'out2');
    // The job runs until the test opens the gate, after the takeover: it is still running when
    // the leader is killed, however loaded the machine, and takes no longer than the test needs.
    const gate = join(data, 'gate');
    const splits = 4;
    const records = 50;
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      String(splits),
      '--records',
      String(records),
      '--parallelism',
      '2',
      '--gate',
      gate,
      '--output',
      out,
    ]);
    await cluster.waitFor(async () => (await cluster.status(jobId)).state === 'RUNNING', 30_000, 'the job to run');

    const listed = await cluster.rebound(['list', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const jobs = (JSON.parse(listed.stdout) as { jobs: { jobId: string; state: string; error: string }[] }).jobs;
    expect(jobs.find((j) => j.jobId === 'garbage-job')).toMatchObject({
      state: 'DAMAGED',
      error: expect.stringMatching(/jobgraph\.pb cannot be decoded/),
    });
    expect(jobs.find((j) => j.jobId === done.jobId)).toMatchObject({
      state: 'DAMAGED',
      error: expect.stringMatching(/status\.json is not valid JSON/),
    });
    expect(jobs.find((j) => j.jobId === jobId)?.state).toBe('RUNNING');

    expect((await cluster.status(jobId)).state).toBe('RUNNING');
    let killed;
    try {
      killed = await cluster.killLeader();
      // The next leader took the healthy job over (the damaged ones did not stop it) before it can end.
      await cluster.waitFor(
        async () => {
          const s = await cluster.status(jobId);
          return s.leaderEpoch > killed!.epoch && s.state === 'RUNNING';
        },
        30_000,
        'the next leader to run the job',
      );
    } finally {
      await writeFile(gate, '');
    }
    const final = await cluster.waitForJob(jobId, 120_000);
    expect(final.leaderEpoch).toBeGreaterThan(killed.epoch);
    expect(diffMaps(expectedNumbered(splits, records), await readSinkOutput(out, String))).toEqual([]);

    const human = await cluster.rebound(['list']);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/garbage-job: stored files of this job cannot be read .* inspect or remove /);
  });
});

describe('finished job retention', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 1,
      taskmanagers: 1,
      slots: 2,
      config: { 'jobstore.expiration-time': '2 s' },
    });
    data = await makeTempDir('rebound-it-retention-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('removes a finished job directory after jobstore.expiration-time, and the output stays', async () => {
    const files = await generateTextFiles(join(data, 'in'), { files: 2, linesPerFile: 50, seed: 4 });
    const run = await cluster.submit(
      'examples/wordcount.ts',
      ['--input', join(data, 'in'), '--output', join(data, 'out')],
      { wait: true },
    );
    expect(run.code, run.stderr).toBe(0);
    const jobDir = join(cluster.haDir, 'jobs', run.jobId);
    await cluster.waitFor(
      async () =>
        !(await stat(jobDir).then(
          () => true,
          () => false,
        )),
      60_000,
      `${jobDir} to be removed`,
    );
    const listed = JSON.parse((await cluster.rebound(['list', '--json'])).stdout) as { jobs: { jobId: string }[] };
    expect(listed.jobs.map((j) => j.jobId)).not.toContain(run.jobId);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(join(data, 'out')))).toEqual([]);
  });
});
