import type {
  Configuration,
  PartitionWithMetrics__Output,
  ResultPartitionId,
  ResultPartitionId__Output,
  ShuffleWorkerLocation__Output,
  TaskManagerLocation__Output,
} from '@rebound/core';
import type { RegisteredTaskManager } from '../task-manager-registry.js';

/**
 * Where a finished partition is kept: the TaskManager that produced it (TaskManager shuffle) or,
 * with a remote shuffle service, a shuffle worker.
 */
export interface PartitionHolder {
  readonly kind: 'taskmanager' | 'shuffle-worker';
  readonly id: string;
  readonly address: string;
}

/** A partition some holder reported after a failover, with what it holds of it. */
export interface PartitionWithMetrics {
  readonly holder: PartitionHolder;
  readonly partition: PartitionWithMetrics__Output;
}

/**
 * A ShuffleMaster's state as the event log records it (Flink's ShuffleMasterSnapshot): a full
 * snapshot replaces every earlier one on replay, an incremental one is added to them.
 */
export class ShuffleMasterSnapshot {
  constructor(
    readonly state: Uint8Array,
    private readonly incremental: boolean,
  ) {}

  isIncremental(): boolean {
    return this.incremental;
  }

  /** A stateless ShuffleMaster's snapshot: nothing is recorded for it. */
  static empty(): ShuffleMasterSnapshot {
    return new ShuffleMasterSnapshot(new Uint8Array(0), false);
  }

  isEmpty(): boolean {
    return this.state.length === 0;
  }
}

/** What a snapshot is taken for (Flink's ShuffleMasterSnapshotContext). */
export interface ShuffleMasterSnapshotContext {
  readonly jobId: string;
  /**
   * The execution that finished completed its vertex: the event closes a durable unit of the log,
   * so a ShuffleMaster that keeps increments should return a full snapshot now.
   */
  readonly vertexFinished: boolean;
}

/**
 * What a ShuffleMaster may tell the job it serves (Flink's JobShuffleContext). During a recovery
 * the holders' reports arrive here as they come, so that the reconnect wait can end as soon as
 * every needed partition is back.
 */
export interface JobShuffleContext {
  readonly jobId: string;
  /** The cluster's configuration with the job's on top (`shuffle.remote.replicas` is per job). */
  readonly jobConfig: Configuration;
  /**
   * Reports of the job's partitions arrived. `from`: the holder that answered, when the answer is
   * all it holds of the job (even if empty): the reconnect wait no longer waits for it.
   */
  partitionsReported(reports: readonly PartitionWithMetrics[], from?: PartitionHolder): void;
  /**
   * Finished partitions of the job are lost for good (every holder of each is gone): their
   * producers must run again if a consumer still needs them.
   */
  partitionsLost(partitions: readonly ResultPartitionId__Output[], reason: string): void;
}

/**
 * The JobMaster's side of the shuffle (FLIP-383's ShuffleMaster): knows where each job's
 * finished partitions are kept, and takes part in batch job recovery. One per leadership, shared
 * by its jobs, as in Flink.
 *
 * Unlike Flink's `snapshotState`, which completes a future, a snapshot is taken synchronously:
 * the state lives in this process, and the snapshot must go into the very event whose
 * execution it covers, in the order the graph changed.
 */
export interface ShuffleMaster {
  /** The kind of shuffle, as the job status names it (`taskmanager` for the default). */
  readonly type: string;
  /**
   * Whether a finished partition outlives the TaskManager that produced it (Flink's
   * `ShuffleDescriptor.storesLocalResourcesOn()` being empty): then a lost TaskManager costs
   * only its running tasks.
   */
  readonly partitionsOutliveTaskManagers: boolean;
  /**
   * A producer is about to be deployed (Flink's `registerPartitionWithProducer`): the shuffle
   * workers it must write its partition to, first the primary; none when it keeps the partition.
   */
  registerPartitionWithProducer(
    jobId: string,
    partition: ResultPartitionId,
    producer: TaskManagerLocation__Output,
  ): ShuffleWorkerLocation__Output[];
  /**
   * Where the finished partition is kept, as the holders to read it from, in order.
   * `producer`: the TaskManager that produced it (where the TaskManager shuffle keeps it).
   */
  holdersOf(jobId: string, partition: ResultPartitionId, producer: TaskManagerLocation__Output): PartitionHolder[];
  registerJob(context: JobShuffleContext): void;
  /** The job is no longer served by this leadership (it ended, or the leadership did). */
  unregisterJob(jobId: string): void;
  /** The job ended for good: whatever the shuffle keeps of it can go. */
  releaseJob(jobId: string): void;
  /**
   * Whether a later leader can rebuild this ShuffleMaster's state from its snapshots. Without it
   * batch job recovery is off for every job: their finished work could not be found again.
   */
  supportsBatchSnapshot(): boolean;
  /** Undefined, or an empty snapshot: nothing to record. */
  snapshotState(context: ShuffleMasterSnapshotContext): ShuffleMasterSnapshot | undefined;
  /** The snapshots the log kept of the job, oldest first, from its newest full one on. */
  restoreState(jobId: string, snapshots: readonly ShuffleMasterSnapshot[]): void;
  /**
   * A new leader starts to reconcile the job: from now until `getAllPartitionWithMetrics`, what
   * holders report of it is collected (and passed on to the job's context).
   */
  notifyPartitionRecoveryStarted(jobId: string): void;
  /**
   * What a TaskManager reported it kept of the job when it registered with this leader. A
   * ShuffleMaster whose partitions live elsewhere has nothing to learn from it.
   */
  taskManagerReported(
    jobId: string,
    tm: RegisteredTaskManager,
    partitions: readonly PartitionWithMetrics__Output[],
  ): void;
  /** Every partition of the job reported since the recovery started. */
  getAllPartitionWithMetrics(jobId: string): Promise<PartitionWithMetrics[]>;
  /** Releases partitions of the job that nothing needs any more, on the holder that keeps them. */
  releasePartitions(jobId: string, holder: PartitionHolder, partitions: readonly ResultPartitionId[]): Promise<void>;
  /**
   * A producer could not reach these shuffle workers: place no partition there for a while
   * (Celeborn's excluded workers). Their heartbeats decide whether they are lost.
   */
  excludeWorkers(workerIds: readonly string[], reason: string): void;
}
