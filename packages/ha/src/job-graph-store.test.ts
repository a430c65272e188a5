import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeMessage, type JobGraph, type JobGraph__Output, JobNotFoundError, newJobId } from '@rebound/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HaPaths } from './file/ha-dir.js';
import { FileJobGraphStore } from './file/file-job-graph-store.js';
import { sampleBundle, sampleJobGraph } from './ha-drivers.test-util.js';

let haDir: string;
let store: FileJobGraphStore;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-ha-jobs-'));
  store = new FileJobGraphStore(haDir);
});

afterEach(async () => {
  await rm(haDir, { recursive: true, force: true });
});

const graph = sampleJobGraph;
const bundle = sampleBundle;

/**
 * The file driver's own behaviour: the files in the job directory, torn or foreign files, stray
 * temporary files. What both backends share is in job-graph-store.drivers.test.ts.
 */
describe('JobGraphStore', () => {
  it('never reports a half-written job or stray temporary files', async () => {
    const jobId = newJobId();
    await store.putJob(graph(jobId, 'complete', 1), bundle);
    const half = newJobId();
    const halfDir = HaPaths.jobDir(haDir, half);
    await mkdir(halfDir, { recursive: true });
    await writeFile(join(halfDir, 'module.mjs'), bundle);
    await writeFile(join(halfDir, 'jobgraph.pb.tmp-1a2b3c4d'), 'partial');
    await writeFile(join(HaPaths.jobsDir(haDir), `${newJobId()}.tmp-00ff00ff`), 'stray');
    await writeFile(join(HaPaths.jobDir(haDir, jobId), 'status.json.tmp-deadbeef'), '{"sta');

    expect(await store.listJobIds()).toEqual([jobId]);
    expect((await store.listJobs()).map((j) => j.jobId)).toEqual([jobId]);
    await expect(store.getJob(half)).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await store.getTerminalStatus(jobId)).toBeUndefined();
  });

  it('refuses a jobgraph.pb cut anywhere, even at a protobuf field boundary, and one with a flipped bit', async () => {
    const g = {
      ...graph('f-framed', 'framed', 6),
      vertices: [
        { id: 'v1', name: 'Source', parallelism: 2 },
        { id: 'v2', name: 'Sink', parallelism: 1 },
      ],
    } as JobGraph;
    await store.putJob(g, bundle);
    const file = join(store.jobDir('f-framed'), 'jobgraph.pb');
    const whole = await readFile(file);
    expect((await store.getJob('f-framed')).graph.vertices.map((v) => v.id)).toEqual(['v1', 'v2']);
    // Without the frame, the graph cut at a field boundary is a valid, smaller graph of the same job.
    const payload = whole.subarray(13);
    const decodesAs = (len: number): JobGraph__Output | undefined => {
      try {
        return decodeMessage<JobGraph__Output>('JobGraph', payload.subarray(0, len));
      } catch {
        return undefined;
      }
    };
    let cut = payload.length - 1;
    while (cut > 0 && decodesAs(cut)?.job_id !== 'f-framed') cut--;
    expect(cut).toBeGreaterThan(0);
    expect(decodesAs(cut)).not.toEqual(decodesAs(payload.length));
    for (const len of [2, 9, 13, 13 + cut, whole.length - 1]) {
      await writeFile(file, whole.subarray(0, len));
      await expect(store.getJob('f-framed'), `cut at ${len}`).rejects.toThrow(/jobgraph\.pb cannot be decoded: torn/);
    }
    const flipped = Buffer.from(whole);
    flipped[20]! ^= 0x10;
    await writeFile(file, flipped);
    await expect(store.getJob('f-framed')).rejects.toThrow(/jobgraph\.pb cannot be decoded: checksum mismatch/);
    // A file from before the frame (bare protobuf) still reads.
    await writeFile(file, payload);
    expect((await store.getJob('f-framed')).graph.name).toBe('framed');
  });

  it('lists a job with unreadable files with the reason, and every other job as usual', async () => {
    await store.putJob(graph('a-good', 'good', 1), bundle);
    await store.putJob(graph('b-garbage-status', 'bad status', 2), bundle);
    await store.putJob(graph('c-garbage-graph', 'bad graph', 3), bundle);
    await store.putJob(graph('d-finished', 'done', 4), bundle);
    await store.markTerminal('d-finished', { state: 'FINISHED', finishedAtMs: 10 });
    await writeFile(join(store.jobDir('b-garbage-status'), 'status.json'), '{"state": "FINI');
    await writeFile(join(store.jobDir('c-garbage-graph'), 'jobgraph.pb'), Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
    // Zeros decode as an empty graph; the chaos harness's damaged-job-dir fault found it listed as a job.
    await store.putJob(graph('e-zeroed-graph', 'zeroed graph', 5), bundle);
    await writeFile(join(store.jobDir('e-zeroed-graph'), 'jobgraph.pb'), Buffer.alloc(64));

    const listed = await store.listJobs();
    expect(listed.map((j) => [j.jobId, j.status?.state, j.damage !== undefined])).toEqual([
      ['b-garbage-status', undefined, true],
      ['c-garbage-graph', undefined, true],
      ['e-zeroed-graph', undefined, true],
      ['a-good', undefined, false],
      ['d-finished', 'FINISHED', false],
    ]);
    const bStatus = listed.find((j) => j.jobId === 'b-garbage-status')!;
    expect(bStatus.damage).toMatch(/status\.json is not valid JSON.*inspect or remove .*b-garbage-status/);
    expect(listed.find((j) => j.jobId === 'c-garbage-graph')!.damage).toMatch(/jobgraph\.pb cannot be decoded/);
    expect(listed.find((j) => j.jobId === 'e-zeroed-graph')!.damage).toMatch(
      /jobgraph\.pb names job '', not e-zeroed-graph/,
    );

    // A takeover reads status files only: the damaged status is reported, the finished job skipped.
    expect(await store.listUnfinishedJobs()).toEqual([
      { jobId: 'a-good' },
      { jobId: 'b-garbage-status', damage: expect.stringMatching(/not valid JSON/) },
      { jobId: 'c-garbage-graph' },
      { jobId: 'e-zeroed-graph' },
    ]);
  });

  it('keeps the module as module.mjs and a terminal status as status.json in the job directory', async () => {
    const jobId = newJobId();
    await store.putJob(graph(jobId, 'j', 1), bundle);
    await store.markTerminal(jobId, { state: 'FAILED', finishedAtMs: 350, failure: 'boom' });
    expect(store.jobDir(jobId)).toBe(HaPaths.jobDir(haDir, jobId));
    expect(new Uint8Array(await readFile(join(HaPaths.jobDir(haDir, jobId), 'module.mjs')))).toEqual(bundle);
    expect(JSON.parse(await readFile(join(HaPaths.jobDir(haDir, jobId), 'status.json'), 'utf8'))).toEqual({
      state: 'FAILED',
      finishedAtMs: 350,
      failure: 'boom',
    });
  });
});
