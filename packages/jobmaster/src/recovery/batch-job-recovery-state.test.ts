import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { OperatorCoordinatorProvider } from '@rebound/api';
import { ShuffleMasterSnapshot, type ShuffleMasterSnapshotContext } from '../shuffle/shuffle-master.js';
import { TaskManagerShuffleMaster } from '../shuffle/task-manager-shuffle-master.js';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import { until } from '../testing/fake-task-manager.js';
import { InProcessLeaders, finish, retainedPartitionOf } from '../testing/in-process-leaders.js';
import {
  RECONCILE,
  SMALL_TASKS,
  SOURCE,
  createRecoveryDir,
  dir,
  finishSink,
  graphOf,
  runSources,
  seqSum,
} from './batch-job-recovery.test-util.js';

/** The TaskManager shuffle, with snapshots of its own: what was taken, and what came back. */
class RecordingShuffleMaster extends TaskManagerShuffleMaster {
  readonly taken: ShuffleMasterSnapshotContext[] = [];
  readonly restored: string[][] = [];
  private recoveryStarted = false;
  recoveryStartedBeforeRestore = false;

  override snapshotState(context: ShuffleMasterSnapshotContext): ShuffleMasterSnapshot {
    this.taken.push(context);
    return new ShuffleMasterSnapshot(Buffer.from(`s${this.taken.length}`), !context.vertexFinished);
  }

  override restoreState(_jobId: string, snapshots: readonly ShuffleMasterSnapshot[]): void {
    this.recoveryStartedBeforeRestore = this.recoveryStarted;
    this.restored.push(
      snapshots.map((s) => `${s.isIncremental() ? 'incremental' : 'full'} ${Buffer.from(s.state).toString()}`),
    );
  }

  override notifyPartitionRecoveryStarted(jobId: string): void {
    this.recoveryStarted = true;
    super.notifyPartitionRecoveryStarted(jobId);
  }
}

describe('batch job recovery in one process', () => {
  let leaders: InProcessLeaders | undefined;

  beforeEach(createRecoveryDir);
  afterEach(async () => {
    await leaders?.close();
    leaders = undefined;
  });

  /* FLIP-383's ShuffleMaster snapshots: taken with finished events, restored before reconciling. */
  it('records shuffle master snapshots with finished events and restores the newest full one with the increments after it', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const masters: RecordingShuffleMaster[] = [];
    const shuffleMaster = (gateway: TaskExecutorGateway, epoch: number) => {
      const m = new RecordingShuffleMaster({ gateway, epoch });
      masters.push(m);
      return m;
    };
    // Every finished event is due a snapshot: increments, and a full one when a vertex finishes.
    const EVERY = { ...SMALL_TASKS, 'execution.batch.job-recovery.snapshot.min-pause': '0 ms' };
    const l1 = await leaders.elect({ config: EVERY, shuffleMaster });
    const sources = await runSources(l1);
    const SINK = graph.vertices[1]!.id;
    await until(() => l1.gateway.of(SINK).length === 4, 'the sink stage to run');
    await finishSink(
      l1,
      l1.gateway.of(SINK).find((d) => d.tdd.execution!.subtask === 0)!,
    );
    expect(masters[0]!.taken.map((c) => c.vertexFinished)).toEqual([false, false, false, true, false]);
    await leaders.kill(l1);

    const l2 = await leaders.elect({
      config: { ...EVERY, ...RECONCILE },
      shuffleMaster,
      retained: new Map([['tm-1', sources.map((d) => retainedPartitionOf(d))]]),
    });
    // s4 is the full snapshot the last source's finish took; s1-s3 came before it.
    expect(masters[1]!.restored).toEqual([['full s4', 'incremental s5']]);
    expect(masters[1]!.recoveryStartedBeforeRestore).toBe(true);
    expect(l2.recoveries.at(-1)).toMatchObject({
      partitions_reused: 4,
      partitions_missing: 0,
      reconnect_wait_ended: 'all-reported',
    });
    expect(l2.job.status()).toMatchObject({ shuffle_type: 'taskmanager', job_recovery_disabled: '' });
  });

  /* Flink's testRecoverDecidedParallelismFromTheSameJobGraphInstance. */
  it('restores an adaptively decided parallelism from the same JobGraph instance, whatever the new leader would decide', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: SMALL_TASKS });
    await runSources(l1);
    const decided = l1.job.graph.vertices[1]!;
    await until(() => decided.isInitialized, 'the consumer to be initialized');
    expect(decided.parallelism).toBe(4);
    const ranges = JSON.stringify(decided.inputRanges);
    await leaders.kill(l1);

    // With 1 mb per task the bytes would give parallelism 1: the recorded decision must win.
    const l2 = await leaders.elect({
      config: { 'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': '1 mb' },
    });
    const restored = l2.job.graph.vertices[1]!;
    expect(restored.parallelism).toBe(4);
    expect(restored.decidedAdaptively).toBe(true);
    expect(JSON.stringify(restored.inputRanges)).toBe(ranges);
    expect(graph.vertices[1]!.parallelism).toBe(0);
  });

  /* Flink's testJobVertexUnFinishedAndOperatorCoordinatorNotSupportBatchSnapshot, with a lost producer partition. */
  it('a non-source vertex whose coordinator has no batch snapshots reruns whole, and the producer of a lost partition reruns first', async () => {
    let created = 0;
    const noSnapshots: OperatorCoordinatorProvider = {
      create: () => {
        created++;
        return { handleRequest: () => null };
      },
    };
    const { graph, operators } = await graphOf(seqSum(noSnapshots));
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: SMALL_TASKS });
    const sources = await runSources(l1);
    const CONSUMER = graph.vertices[1]!.id;
    await until(() => l1.gateway.of(CONSUMER).length === 4, 'the consumers to run');
    await finishSink(
      l1,
      l1.gateway.of(CONSUMER).find((d) => d.tdd.execution!.subtask === 0)!,
    );
    await leaders.kill(l1);
    expect(created).toBe(1);

    const kept = sources.filter((d) => d.tdd.execution!.subtask !== 1).map((d) => retainedPartitionOf(d));
    const window = { 'execution.batch.job-recovery.previous-worker.recovery.timeout': '300 ms' };
    const l2 = await leaders.elect({ config: { ...SMALL_TASKS, ...window }, retained: new Map([['tm-1', kept]]) });
    // The finished consumer#0 is dropped (its coordinator's state is gone) and source#1 reruns.
    expect(l2.recoveries.at(-1)).toMatchObject({
      executions_recovered: 4,
      executions_reset: 2,
      partitions_reused: 3,
      partitions_missing: 1,
      // The one TaskManager answered without it: nothing more can come, so the wait ends.
      reconnect_wait_ended: 'holders-settled',
    });
    expect(l2.job.graph.executionVertex(CONSUMER, 0)!.state).not.toBe('FINISHED');
    expect(created).toBe(2);
    await until(() => l2.gateway.of(SOURCE).length === 1, 'source#1 to rerun');
    expect(l2.gateway.of(SOURCE)[0]!.tdd.execution).toMatchObject({ subtask: 1, attempt: 1 });
    expect(l2.gateway.of(CONSUMER)).toHaveLength(0);
    finish(l2.job, l2.gateway.of(SOURCE)[0]!, [100, 0, 0, 100]);
    await until(() => l2.gateway.of(CONSUMER).length === 4, 'every consumer to run again');
    expect(l2.gateway.of(CONSUMER).find((d) => d.tdd.execution!.subtask === 0)!.tdd.execution!.attempt).toBe(1);
    await leaders.kill(l2);

    // The drop is in the log: a third leader does not find consumer#0 finished either.
    const l3 = await leaders.elect({ config: SMALL_TASKS });
    expect(l3.job.graph.executionVertex(CONSUMER, 0)!.state).not.toBe('FINISHED');
  });
});
