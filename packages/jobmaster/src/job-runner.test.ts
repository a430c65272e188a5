import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Configuration,
  createLogger,
  newJobId,
  silentLogger,
  systemClock,
  type JobGraph__Output,
  type Logger,
} from '@rebound/core';
import { buildJob, bundleJobModule, loadJobModule } from '@rebound/api';
import { jobEventsDir } from '@rebound/event-store';
import { FileHaServices, type JobGraphStore } from '@rebound/ha';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserCodeWorkers } from './user-code/user-code-workers.js';
import { JobRecordName, JobRecords } from './job-records.js';
import { JobRunner } from './job-runner.js';
import { TaskManagerShuffleMaster } from './shuffle/task-manager-shuffle-master.js';
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

/** Stands in for the workers that load job modules: every module fails to load. */
const failingWorkers = {
  start: () => Promise.reject(new Error('module throws at import')),
} as unknown as UserCodeWorkers;

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
    userCodeWorkers: failingWorkers,
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
    // Its load attempt stays counted: its worker failed before the module was loaded.
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

/** A shuffle whose state a later leader could not rebuild (Flink's default for a ShuffleMaster). */
class NoSnapshotShuffleMaster extends TaskManagerShuffleMaster {
  override readonly type = 'no-snapshot';
  override supportsBatchSnapshot(): boolean {
    return false;
  }
}

describe('JobRunner and the ShuffleMaster', () => {
  it('disables batch job recovery, in the log and the status, when the shuffle master cannot snapshot', async () => {
    const entry = join(import.meta.dirname, '../../../examples/wordcount.ts');
    const args = ['--input', haDir, '--output', join(haDir, 'out')];
    const built = await buildJob(await loadJobModule(entry), args);
    const jobId = newJobId();
    const graph = {
      ...built.graph,
      job_id: jobId,
      job_args: args,
      config: { 'execution.batch.job-recovery.enabled': 'true' },
    } as JobGraph__Output;
    await store.putJob(graph, (await bundleJobModule(entry)).code);
    const logFile = join(haDir, 'jobmaster.log');
    const workers = new UserCodeWorkers();
    const ha = new FileHaServices(haDir, haDir, Configuration.of({}));
    const withoutSnapshots = new JobRunner({
      epoch: 2,
      jobmasterId: 'jm-2',
      address: '127.0.0.1:1',
      ha,
      store,
      records: new JobRecords(store),
      registry,
      gateway: new FakeTaskExecutorGateway(),
      shuffleMaster: new NoSnapshotShuffleMaster({ epoch: 2, gateway: new FakeTaskExecutorGateway() }),
      config: Configuration.of({}),
      logger: createLogger('jobmaster', { file: logFile }),
      clock: systemClock,
      userCodeWorkers: workers,
      electedAtMs: 0,
    });
    try {
      await withoutSnapshots.start((await store.getJob(jobId)).graph, false);
      const reason = 'the no-snapshot shuffle master does not support batch snapshots';
      expect(withoutSnapshots.get(jobId)!.status()).toMatchObject({
        job_recovery_disabled: reason,
        shuffle_type: 'no-snapshot',
      });
      const warnings = (await readFile(logFile, 'utf8'))
        .split('\n')
        .filter((l) => l.includes('batch job recovery is disabled for this job'));
      expect(warnings).toHaveLength(1);
      expect(JSON.parse(warnings[0]!)).toMatchObject({ level: 40, jobId, shuffleType: 'no-snapshot' });
      // No event log: a failover restarts this job from scratch.
      await expect(readdir(jobEventsDir(haDir, jobId))).rejects.toThrow(/ENOENT/);
    } finally {
      await withoutSnapshots.close();
    }
  });
});
