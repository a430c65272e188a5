import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, type JobGraph, JobNotFoundError, newJobId, ReboundError } from '@rebound/core';
import { HaPaths } from './file/ha-dir.js';
import { backendsUnderTest, DriverFixture, sampleBundle, sampleJobGraph } from './ha-drivers.test-util.js';
import { DefaultJobGraphStore } from './job-graph-store.js';

/** The job graph store as both backends provide it (see ha-drivers.test-util.ts for how each half runs). */
describe.each(backendsUnderTest())('job graph store on the $name driver', (backend) => {
  const f = new DriverFixture(backend);
  beforeAll(f.setUp);
  afterAll(f.tearDown);
  afterEach(f.cleanUp);

  /** The job store of a leader on a new, empty cluster state. */
  async function leaderStore() {
    await backend.reset();
    const { ha, epoch } = await f.lead();
    return { ha, store: ha.leaderJobGraphStore(epoch) };
  }

  const small = (jobId: string, submittedAtMs: number): JobGraph => ({
    job_id: jobId,
    name: `job ${jobId}`,
    submitted_at_ms: submittedAtMs,
  });

  const graph = sampleJobGraph;
  const bundle = sampleBundle;

  it('stores jobs for the leader: graph, status, attachments, listings and retention', async () => {
    const { store } = await leaderStore();
    await store.putJob(small('j-old', 1), bundle);
    await store.putJob(small('j-new', 2), bundle);
    const reader = f.services().jobGraphStore();
    expect(await reader.listJobIds()).toEqual(['j-new', 'j-old']);
    expect((await reader.getJob('j-old')).graph).toMatchObject({ job_id: 'j-old', name: 'job j-old' });
    await expect(reader.getJob('j-none')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(reader.getJob('../etc')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await reader.hasJob('../etc')).toBe(false);

    await store.putJobAttachment('j-old', 'recoveries.json', '[]');
    await expect(store.putJobAttachment('j-old', '../x', '1')).rejects.toThrow(/not a plain file name/);
    await expect(store.putJobAttachment('j-none', 'x', '1')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await reader.listJobAttachments('j-old')).toEqual(['recoveries.json']);
    expect(Buffer.from((await reader.getJobAttachment('j-old', 'recoveries.json'))!).toString()).toBe('[]');
    expect(await reader.getJobAttachment('j-old', 'none')).toBeUndefined();

    await expect(store.markTerminal('j-old', { state: 'RUNNING' as 'FINISHED', finishedAtMs: 1 })).rejects.toThrow(
      /not a terminal job state/,
    );
    await store.markTerminal('j-old', { state: 'FINISHED', finishedAtMs: 100 });
    expect(await reader.getTerminalStatus('j-old')).toEqual({ state: 'FINISHED', finishedAtMs: 100 });
    expect(await reader.listUnfinishedJobs()).toEqual([{ jobId: 'j-new' }]);
    expect((await reader.listJobs()).map((j) => [j.jobId, j.status?.state])).toEqual([
      ['j-old', 'FINISHED'],
      ['j-new', undefined],
    ]);

    expect(await store.removeExpiredJobs(150, 100)).toEqual([]);
    expect(await store.removeExpiredJobs(200, 100)).toEqual(['j-old']);
    expect(await reader.listJobIds()).toEqual(['j-new']);
    await expect(reader.getTerminalStatus('j-old')).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('round-trips a job graph and its module', async () => {
    const { ha, store } = await leaderStore();
    const jobId = newJobId();
    await store.putJob(graph(jobId, 'wordcount', 1000), bundle);
    const { graph: g, modulePath } = await store.getJob(jobId);
    expect(g).toMatchObject({
      job_id: jobId,
      name: 'wordcount',
      submitted_at_ms: 1000,
      job_args: ['--n', '3'],
      config: { 'parallelism.default': '2' },
      module_digest: 'abc',
    });
    expect(g.vertices.map((v) => [v.id, v.parallelism, v.source_supports_batch_snapshot])).toEqual([
      ['v1', 2, true],
      ['v2', 0, false],
    ]);
    // The module is a file in the shared storage directory under either backend.
    expect(modulePath).toBe(join(HaPaths.jobDir(ha.storageDir, jobId), 'module.mjs'));
    expect(new Uint8Array(await readFile(modulePath))).toEqual(bundle);
    expect(await store.listJobIds()).toEqual([jobId]);
    expect(store).toBeInstanceOf(DefaultJobGraphStore);
    expect((store as DefaultJobGraphStore).jobDir(jobId)).toBe(HaPaths.jobDir(ha.storageDir, jobId));
  });

  it('reports unknown jobs with JobNotFoundError and rejects unusable ids', async () => {
    const { store } = await leaderStore();
    const unknown = newJobId();
    await expect(store.getJob(unknown)).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(store.getJob('../etc')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(store.getTerminalStatus(unknown)).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(store.markTerminal(unknown, { state: 'FINISHED', finishedAtMs: 1 })).rejects.toBeInstanceOf(
      JobNotFoundError,
    );
    await expect(store.putJobAttachment(unknown, 'x.json', '{}')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await store.listJobIds()).toEqual([]);
    const err = await store.putJob(graph('../escape', 'x', 1), bundle).catch((e: unknown) => e);
    expect((err as ReboundError).code).toBe(ErrorCode.JOB_INVALID);
  });

  it('records terminal states and lists running and terminal jobs', async () => {
    const { store } = await leaderStore();
    const [a, b, c] = [newJobId(), newJobId(), newJobId()];
    await store.putJob(graph(b, 'second', 200), bundle);
    await store.putJob(graph(a, 'first', 100), bundle);
    await store.putJob(graph(c, 'third', 300), bundle);
    await store.markTerminal(a, { state: 'FINISHED', finishedAtMs: 150 });
    await store.markTerminal(c, { state: 'FAILED', finishedAtMs: 350, failure: 'boom' });

    expect(await store.getTerminalStatus(a)).toEqual({ state: 'FINISHED', finishedAtMs: 150 });
    expect(await store.getTerminalStatus(b)).toBeUndefined();
    expect(await store.getTerminalStatus(c)).toEqual({ state: 'FAILED', finishedAtMs: 350, failure: 'boom' });
    expect(await store.listJobs()).toEqual([
      { jobId: a, name: 'first', submittedAtMs: 100, status: { state: 'FINISHED', finishedAtMs: 150 } },
      { jobId: b, name: 'second', submittedAtMs: 200, status: undefined },
      { jobId: c, name: 'third', submittedAtMs: 300, status: { state: 'FAILED', finishedAtMs: 350, failure: 'boom' } },
    ]);
    const err = await store.markTerminal(b, { state: 'RUNNING' as never, finishedAtMs: 1 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReboundError);
  });

  it('keeps attachments with the job', async () => {
    const { store } = await leaderStore();
    const jobId = newJobId();
    await store.putJob(graph(jobId, 'j', 1), bundle);
    expect(await store.getJobAttachment(jobId, 'recovery-2.json')).toBeUndefined();
    await store.putJobAttachment(jobId, 'recovery-2.json', '{"epoch":2}');
    await store.putJobAttachment(jobId, 'recovery-3.json', new Uint8Array([1, 2, 3]));
    await store.putJobAttachment(jobId, 'recovery-2.json', '{"epoch":2,"v":2}');
    expect(new TextDecoder().decode(await store.getJobAttachment(jobId, 'recovery-2.json'))).toBe('{"epoch":2,"v":2}');
    expect(await store.getJobAttachment(jobId, 'recovery-3.json')).toEqual(new Uint8Array([1, 2, 3]));
    expect(await store.listJobAttachments(jobId)).toEqual(['recovery-2.json', 'recovery-3.json']);
    await expect(store.putJobAttachment(jobId, '../status.json', 'x')).rejects.toBeInstanceOf(ReboundError);
  });

  it('removes terminal jobs once their retention has passed, and nothing else', async () => {
    const { ha, store } = await leaderStore();
    await store.putJob(graph('old', 'old', 1), bundle);
    await store.putJob(graph('recent', 'recent', 2), bundle);
    await store.putJob(graph('running', 'running', 3), bundle);
    await store.putJob(graph('damaged', 'damaged', 4), bundle);
    await store.markTerminal('old', { state: 'FINISHED', finishedAtMs: 1_000 });
    await store.markTerminal('recent', { state: 'FAILED', finishedAtMs: 5_000, failure: 'x' });
    await backend.damageStatus(ha, 'damaged');
    // The job's event log lives in the storage directory under either backend, and goes with it.
    const events = join(HaPaths.jobDir(ha.storageDir, 'old'), 'job-events', 'events.1');
    await mkdir(join(HaPaths.jobDir(ha.storageDir, 'old'), 'job-events'), { recursive: true });
    await writeFile(events, 'x');

    expect(await store.removeExpiredJobs(6_000, 5_000)).toEqual(['old']);
    expect(await store.listJobIds()).toEqual(['damaged', 'recent', 'running']);
    await expect(readFile(events)).rejects.toThrow(/ENOENT/);
    expect(await store.removeExpiredJobs(10_000, 5_000)).toEqual(['recent']);
    expect(await store.listJobIds()).toEqual(['damaged', 'running']);
  });
});
