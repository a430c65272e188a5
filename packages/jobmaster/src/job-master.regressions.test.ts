import { mkdtemp, open, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Configuration, decodeMessage, encodeMessage, partitionKey, silentLogger, systemClock } from '@rebound/core';
import type {
  JobGraph__Output,
  PartitionWithMetrics,
  RecoveryReport,
  TaskDeploymentDescriptor__Output,
} from '@rebound/core';
import { buildJob, defineJob } from '@rebound/api';
import { FileSystemJobEventStore, JobEventManager, jobEventsDir } from '@rebound/event-store';
import { JobMaster } from './job-master.js';
import { InProcessUserCode } from './user-code/in-process-user-code.js';
import { TaskManagerRegistry } from './task-manager-registry.js';
import { fakeTaskManager, finishTask, until, type Retained } from './testing/fake-task-manager.js';

/**
 * Regressions found by the chaos harness (packages/chaos), named after the fault that found them.
 */

const JOB_ID = 'fedcba9876543210fedcba9876543210';

describe('JobMaster regressions', () => {
  let haDir: string;
  let out: string;
  let deployed: TaskDeploymentDescriptor__Output[];
  let tm: { address: string; close(): Promise<void> };
  const registries: TaskManagerRegistry[] = [];
  let leaderEpoch = 1;

  beforeEach(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rebound-jm-regr-'));
    haDir = join(dir, 'ha');
    out = join(dir, 'out');
    deployed = [];
    leaderEpoch = 1;
    tm = await fakeTaskManager(deployed);
  });

  afterEach(async () => {
    for (const r of registries.splice(0)) r.close();
    await tm.close();
  });

  async function jobMaster(
    epoch: number,
    taskManagers: { id: string; address: string }[] = [{ id: 'tm-1', address: tm.address }],
    extraConfig: Record<string, string> = {},
  ): Promise<{ job: JobMaster; events: JobEventManager; recoveries: RecoveryReport[] }> {
    const def = defineJob('seq-sum', (env) => {
      env
        .generateSequence(0, 99, { splitSize: 25 })
        .map((n) => [n % 3, n] as [number, number])
        .keyBy((t) => t[0])
        .sum(1)
        .writeAsText(out);
    });
    const built = await buildJob(def, []);
    const graph = decodeMessage<JobGraph__Output>(
      'JobGraph',
      encodeMessage('JobGraph', { ...built.graph, job_id: JOB_ID, module_digest: '0'.repeat(64) }),
    );
    const config = Configuration.of({
      'heartbeat.timeout': '1 min',
      'execution.batch.job-recovery.previous-worker.recovery.timeout': '0 ms',
      ...extraConfig,
    });
    const registry = new TaskManagerRegistry(
      epoch,
      `jm-${epoch}`,
      config,
      { onTaskManagerRegistered: () => {}, onTaskManagerLost: () => {} },
      silentLogger(),
      systemClock,
    );
    registries.push(registry);
    for (const t of taskManagers)
      registry.register({
        task_manager_id: t.id,
        address: t.address,
        slots: 8,
        epoch,
        jobs_with_retained_partitions: [JOB_ID],
        session_id: `session-${t.id}`,
      });
    const events = new JobEventManager(
      new FileSystemJobEventStore({
        haDir,
        jobId: JOB_ID,
        epoch,
        jobMasterId: `jm-${epoch}`,
        currentLeaderEpoch: () => leaderEpoch,
        flushIntervalMs: 10,
      }),
      systemClock,
    );
    const recoveries: RecoveryReport[] = [];
    const job = new JobMaster(graph, new InProcessUserCode(built.operators, silentLogger()), {
      epoch,
      jobmasterId: `jm-${epoch}`,
      address: '127.0.0.1:1',
      config,
      registry,
      logger: silentLogger(),
      clock: systemClock,
      events,
      electedAtMs: Date.now(),
      recoveries,
      saveRecoveries: async () => {},
      saveCommitManifest: async () => {},
      onTerminal: async () => {},
      onSlotsFreed: () => job.schedule(),
    });
    return { job, events, recoveries };
  }

  /*
   * flipped-byte (chaos seed 1005): the harness flipped a bit in the file header of the only event
   * file. Its checksum failed, so the reader dropped the whole file as a torn tail and the new
   * leader replayed no event at all, yet counted the job as recovered and never initialized its
   * source: the first schedule() treated the source as a consumer and threw "Cannot read
   * properties of undefined (reading 'consumers')" out of every TaskManager registration, and the
   * job stayed RUNNING with nothing deployed, forever.
   */
  it('flipped-byte: a takeover that replays no event still initializes and deploys the sources', async () => {
    const first = await jobMaster(1);
    await first.job.start();
    await until(() => deployed.length === 4, 'the first leader to deploy the sources');
    await first.events.flush();
    await first.job.suspend();

    // Damage the file header (after the 8-byte prefix): its checksum fails, the file reads as torn at 0.
    const dir = jobEventsDir(haDir, JOB_ID);
    const [file] = (await readdir(dir)).filter((n) => n.startsWith('events.'));
    const fh = await open(join(dir, file!), 'r+');
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, 10);
    b[0] = b[0]! ^ 0x40;
    await fh.write(b, 0, 1, 10);
    await fh.close();

    leaderEpoch = 2;
    deployed.length = 0;
    const second = await jobMaster(2);
    await second.job.start(true);
    expect(second.job.state).toBe('RUNNING');
    await until(() => deployed.length === 4, 'the new leader to deploy the sources');
    expect(new Set(deployed.map((d) => `${d.execution!.vertex_id}#${d.execution!.subtask}`)).size).toBe(4);
    expect(deployed.every((d) => d.epoch === 2)).toBe(true);
    await second.job.cancel();
  });

  it('flipped-byte: a scheduling error fails the job loudly instead of escaping from schedule()', async () => {
    const { job } = await jobMaster(1);
    await job.start();
    await until(() => deployed.length === 4, 'source deployments');
    // Break the graph the way the missing initialization did: a source vertex that looks uninitialized.
    const source = job.graph.vertices[0]!;
    Object.defineProperty(source, 'isInitialized', { value: false });
    expect(() => job.schedule()).not.toThrow();
    await until(() => job.state === 'FAILED', 'the job to fail');
    expect(job.failure).toMatch(/^scheduling failed: /);
  });

  /*
   * torn-tail, the structural half of chaos seed 2157: the finished events of the first leader's
   * sources were lost, so the second leader runs them again under the same attempt numbers while
   * a TaskManager still holds the first leader's partitions. The epoch in the partition id keeps
   * the two apart: the old copies are released by their own ids, and consumers read the new ones.
   */
  it('torn-tail: a rerun that repeats an attempt number gets partition ids of its own leader epoch', async () => {
    const first = await jobMaster(1);
    await first.job.start();
    await until(() => deployed.length === 4, 'the first leader to deploy the sources');
    await first.events.flush();
    await first.job.suspend();
    const retained: Retained = { partitions: [], delayMs: 0, released: [] };
    const oldIds = deployed.map((d) => ({ ...d.execution!, epoch: 1 }));
    retained.partitions = oldIds.map((id) => ({ partition_id: id, num_subpartitions: 1, total_bytes: 8 }));
    // It offers slots too: the second leader may deploy there as well.
    const holder = await fakeTaskManager(deployed, retained);
    try {
      leaderEpoch = 2;
      deployed.length = 0;
      const second = await jobMaster(
        2,
        [
          { id: 'tm-1', address: tm.address },
          { id: 'tm-old', address: holder.address },
        ],
        {
          'execution.batch.job-recovery.previous-worker.recovery.timeout': '200 ms',
        },
      );
      await second.job.start(true);
      await until(() => deployed.length === 4, 'the second leader to deploy the sources again');
      expect(deployed.map((d) => [d.execution!.attempt, d.epoch])).toEqual([
        [0, 2],
        [0, 2],
        [0, 2],
        [0, 2],
      ]);
      // Nothing finished needs a partition, so the window closes at once and the answer is late.
      await until(() => retained.released.length === 4, 'the old partitions to be released');
      expect(retained.released.sort()).toEqual(oldIds.map((id) => partitionKey(id)).sort());
      for (const tdd of deployed.splice(0)) finishTask(second.job, tdd, [8]);
      await until(() => deployed.length > 0, 'the consumer to be deployed');
      const read = deployed[0]!.inputs.flatMap((i) => i.partitions.map((p) => p.partition_id!));
      expect(read.map((id) => [id.attempt, id.epoch])).toEqual([
        [0, 2],
        [0, 2],
        [0, 2],
        [0, 2],
      ]);
      expect(read.map((id) => partitionKey(id))).not.toContain(partitionKey(oldIds[0]!));
      await second.job.cancel();
    } finally {
      await holder.close();
    }
  });

  /*
   * flipped-byte + partition-delete(failover) (chaos seed 2157): a flipped bit cut the event log
   * after its first record, so the second leader numbered every source attempt from 0 again and
   * ran them on other TaskManagers; the first leader's partitions stayed on tm-1, under the same
   * ids, holding other splits' rows. The third leader took whichever copy was reported last and
   * the job summed some rows twice and others never. A partition now counts only from the
   * TaskManager its finished event names; other copies are released. (Partition ids now carry the
   * deploying leader's epoch, so the second leader's reruns no longer share ids with the first
   * leader's partitions; the copies here stand for any duplicate a TaskManager might report.)
   */
  it('flipped-byte + partition-delete: a partition id reported by a TaskManager the event does not name is released, not read', async () => {
    const deployedA: TaskDeploymentDescriptor__Output[] = [];
    const deployedB: TaskDeploymentDescriptor__Output[] = [];
    const retainedA: Retained = { partitions: [], delayMs: 0, released: [] };
    const retainedB: Retained = { partitions: [], delayMs: 0, released: [] };
    const a = await fakeTaskManager(deployedA, retainedA);
    const b = await fakeTaskManager(deployedB, retainedB);
    try {
      const tms = [
        { id: 'tm-a', address: a.address },
        { id: 'tm-b', address: b.address },
      ];
      const first = await jobMaster(1, tms);
      await first.job.start();
      await until(() => deployedA.length + deployedB.length === 4, 'the source deployments');
      await until(
        () => first.job.graph.vertices[0]!.vertices.every((ev) => ev.state === 'RUNNING'),
        'the sources to run',
      );
      for (const tdd of [...deployedA, ...deployedB]) finishTask(first.job, tdd, [8]);
      await until(() => first.job.graph.vertices[0]!.isFinished(), 'the sources to finish');
      await first.events.flush();
      await first.job.suspend();

      // Each TaskManager holds the partitions the events say it produced, and the other one holds
      // a stale copy of every partition under the same id, reported last.
      const source = first.job.graph.vertices[0]!;
      const producedOn = new Map(source.vertices.map((ev) => [ev.subtask, ev.location!.task_manager_id]));
      const partition = (subtask: number): PartitionWithMetrics => ({
        partition_id: { job_id: JOB_ID, vertex_id: source.id, subtask, attempt: 0, epoch: 1 },
        num_subpartitions: 1,
        total_bytes: 8,
      });
      for (const [subtask, tmId] of producedOn) {
        (tmId === 'tm-a' ? retainedA : retainedB).partitions.push(partition(subtask));
        (tmId === 'tm-a' ? retainedB : retainedA).partitions.push(partition(subtask));
      }
      retainedA.delayMs = 30;
      retainedB.delayMs = 30;
      leaderEpoch = 2;
      const second = await jobMaster(2, tms, {
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '2 s',
      });
      await second.job.start(true);
      const staleOn = (tmId: string) =>
        [...producedOn]
          .filter(([, on]) => on !== tmId)
          .map(([subtask]) => partitionKey(partition(subtask).partition_id!))
          .sort();
      // Both TaskManagers hold stale copies, so each has answered (and its answer was handled)
      // once it saw as many releases as it holds stale copies: no fixed wait for the slower one.
      await until(
        () =>
          retainedA.released.length >= staleOn('tm-a').length && retainedB.released.length >= staleOn('tm-b').length,
        'both TaskManagers to answer and their stale copies to be released',
      );
      for (const ev of second.job.graph.vertices[0]!.vertices) {
        expect(ev.state).toBe('FINISHED');
        expect(ev.location?.task_manager_id, `subtask ${ev.subtask}`).toBe(producedOn.get(ev.subtask));
      }
      expect(retainedA.released.sort()).toEqual(staleOn('tm-a'));
      expect(retainedB.released.sort()).toEqual(staleOn('tm-b'));
      expect(second.recoveries.at(-1)).toMatchObject({
        executions_recovered: 4,
        partitions_reused: 4,
        partitions_missing: 0,
      });
      await second.job.cancel();
    } finally {
      await a.close();
      await b.close();
    }
  });
});
