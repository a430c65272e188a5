import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration, newJobId, silentLogger, systemClock, type JobGraph__Output, type Logger } from '@rebound/core';
import { FileHaServices, type JobGraphStore } from '@rebound/ha';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobModuleProbe } from './job-module-probe.js';
import { JobRecordName, JobRecords } from './job-records.js';
import { JobRunner } from './job-runner.js';
import { TaskManagerRegistry } from './task-manager-registry.js';
import { FakeTaskExecutorGateway } from './testing/in-process-leaders.js';

let haDir: string;
let store: JobGraphStore;
let registry: TaskManagerRegistry;
let runner: JobRunner;

const graphOf = (jobId: string, sinkPath?: string): JobGraph__Output =>
  ({
    job_id: jobId,
    name: 'wordcount',
    submitted_at_ms: 5,
    vertices: sinkPath ? [{ id: 'sink', sink: { path: sinkPath } }] : [],
  }) as unknown as JobGraph__Output;

/** Stands in for the worker that loads job modules: every module fails to load. */
const failingProbe = {
  check: () => Promise.reject(new Error('module throws at import')),
} as unknown as JobModuleProbe;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-job-runner-'));
  const config = Configuration.of({});
  const ha = new FileHaServices(haDir, haDir, config);
  store = ha.leaderJobGraphStore();
  const logger: Logger = silentLogger();
  registry = new TaskManagerRegistry(
    2,
    'jm-2',
    config,
    { onTaskManagerRegistered: () => {}, onTaskManagerLost: () => {} },
    logger,
    systemClock,
  );
  runner = new JobRunner({
    epoch: 2,
    jobmasterId: 'jm-2',
    address: '127.0.0.1:1',
    ha,
    store,
    records: new JobRecords(store),
    registry,
    gateway: new FakeTaskExecutorGateway(),
    config,
    logger,
    clock: systemClock,
    probe: failingProbe,
    electedAtMs: 0,
  });
});

afterEach(async () => {
  await runner.close();
  registry.close();
  await rm(haDir, { recursive: true, force: true });
});

async function stored(sinkPath?: string): Promise<string> {
  const jobId = newJobId();
  await store.putJob(graphOf(jobId, sinkPath), Buffer.from(''));
  return jobId;
}

describe('JobRunner takeover', () => {
  it('completes a started commit, fails a damaged one, and fails a job that cannot load: each on its own', async () => {
    const out = join(haDir, 'out');
    const committed = await stored(out);
    await store.putJobAttachment(
      committed,
      JobRecordName.commitManifest,
      JSON.stringify({ jobId: committed, entries: [], directories: [out] }),
    );
    const torn = await stored();
    await store.putJobAttachment(torn, JobRecordName.commitManifest, '{"jobId":"x","ent');
    const poison = await stored();

    await runner.recoverJobs();

    expect(await store.getTerminalStatus(committed)).toMatchObject({ state: 'FINISHED' });
    expect(await readFile(join(out, '_SUCCESS'), 'utf8')).toBe('');
    expect((await store.getTerminalStatus(torn))?.failure).toMatch(
      /^takeover failed: refusing the stored commit manifest of job [0-9a-f]{32}: it is not JSON/,
    );
    expect((await store.getTerminalStatus(poison))?.failure).toBe('takeover failed: module throws at import');
    // Its load attempt stays counted: the probe failed before the module was loaded here.
    expect(await new JobRecords(store).loadAttempts(poison)).toEqual({ attempts: 1 });
    expect(runner.jobIds()).toEqual([]);
  });

  it('refuses to load a job that took max-crashes JobMasters down while loading', async () => {
    const jobId = await stored();
    await new JobRecords(store).saveLoadAttempts(jobId, 3, 1);
    await expect(runner.start(graphOf(jobId), false)).rejects.toThrow(
      /3 JobMaster\(s\) in a row died while loading it/,
    );
    expect(await store.getTerminalStatus(jobId)).toMatchObject({ state: 'FAILED' });
  });
});
