import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Configuration,
  JobNotFoundError,
  ReboundError,
  newJobId,
  silentLogger,
  systemClock,
  type JobGraph__Output,
} from '@rebound/core';
import { FileHaServices, type JobGraphStore } from '@rebound/ha';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobMaster } from '../job-master.js';
import { JobRecordName, JobRecords } from '../job-records.js';
import { Dispatcher } from './dispatcher.js';

let haDir: string;
let store: JobGraphStore;
let started: string[];
let dispatcher: Dispatcher;

const graphOf = (jobId: string): JobGraph__Output =>
  ({ job_id: jobId, name: 'wordcount', submitted_at_ms: 5, vertices: [] }) as unknown as JobGraph__Output;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-dispatcher-'));
  const config = Configuration.of({});
  store = new FileHaServices(haDir, haDir, config).leaderJobGraphStore();
  started = [];
  dispatcher = new Dispatcher({
    storageDir: haDir,
    epoch: 3,
    store,
    records: new JobRecords(store),
    // No job is live: the Dispatcher answers from the store.
    runner: {
      get: (): JobMaster | undefined => undefined,
      has: () => false,
      start: (graph) => {
        started.push(graph.job_id);
        return Promise.resolve();
      },
    },
    config,
    logger: silentLogger(),
    clock: systemClock,
  });
});

afterEach(async () => {
  dispatcher.close();
  await rm(haDir, { recursive: true, force: true });
});

describe('Dispatcher', () => {
  it('stores and starts a submitted job once, and refuses it a second time', async () => {
    const jobId = newJobId();
    const req = { job_graph: graphOf(jobId), module_bundle: Buffer.from('export default 1') };
    expect(await dispatcher.submit(req)).toBe(jobId);
    expect(started).toEqual([jobId]);
    await expect(dispatcher.submit(req)).rejects.toThrow(/already submitted/);
    await expect(dispatcher.submit({ job_graph: null, module_bundle: Buffer.alloc(0) })).rejects.toBeInstanceOf(
      ReboundError,
    );
  });

  it('knows a stored job no leader took over yet, and no job it never stored', async () => {
    const jobId = newJobId();
    await store.putJob(graphOf(jobId), Buffer.from(''));
    expect(await dispatcher.status(jobId)).toMatchObject({ state: 'CREATED', leader_epoch: 3 });
    expect(await dispatcher.cancel(jobId)).toBe('CREATED');
    await expect(dispatcher.status(newJobId())).rejects.toBeInstanceOf(JobNotFoundError);
  });

  it('answers for a finished job whose final status is damaged from its status.json', async () => {
    const jobId = newJobId();
    await store.putJob(graphOf(jobId), Buffer.from(''));
    await store.markTerminal(jobId, { state: 'FINISHED', finishedAtMs: 9 });
    await store.putJobAttachment(jobId, JobRecordName.finalStatus, Buffer.from([0xff, 0x0f]));
    expect(await dispatcher.status(jobId)).toMatchObject({ state: 'FINISHED', finished_at_ms: 9 });
    expect(await dispatcher.list()).toEqual([
      expect.objectContaining({ job_id: jobId, state: 'FINISHED', tasks_total: 0, tasks_finished: 0 }),
    ]);
    expect(await dispatcher.exceptionHistory(jobId)).toEqual({ entries: [], truncated: false });
  });

  it('keeps the recovery history of a job a later leader finished from its commit manifest', async () => {
    // The leader that recovered the job died committing it; the next one completed the commit
    // and marked it FINISHED without a final status of its own.
    const jobId = newJobId();
    await store.putJob(graphOf(jobId), Buffer.from(''));
    await new JobRecords(store).saveRecoveries(jobId, [{ epoch: 4, executions_recovered: 2 }]);
    await store.markTerminal(jobId, { state: 'FINISHED', finishedAtMs: 9 });
    expect(await dispatcher.status(jobId)).toMatchObject({
      state: 'FINISHED',
      recoveries: [expect.objectContaining({ epoch: 4, executions_recovered: 2 })],
    });
  });
});
