import type { PartitionHolder, PartitionWithMetrics } from '../shuffle/shuffle-master.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';

/**
 * FLIP-383 on the JobMaster (Flink's BatchJobRecoveryHandler): records what a later leader needs,
 * and on a takeover replays it, reconciles with the partitions the TaskManagers kept, and falls
 * back to a restart from scratch when the log cannot be used.
 */
export interface BatchJobRecoveryHandler {
  /**
   * Starts the job's event log (a new file of this leader; earlier files stay readable). Returns
   * whether to recover: on a `takeover` when earlier leaders left events. Otherwise recording
   * starts now; when recovering, it starts once the graph holds what the log already says.
   */
  initialize(takeover: boolean): Promise<boolean>;
  /**
   * Replays the events into the graph and coordinators, reconciles partitions, and resets what
   * was lost. Returns false when it fell back to a restart from scratch.
   */
  startRecovering(): Promise<boolean>;
  /** The ShuffleMaster learned where partitions of the job are kept (during a reconciliation). */
  onPartitionsReported(reports: readonly PartitionWithMetrics[], from?: PartitionHolder): void;
  /** A TaskManager registered with this leader, holding retained partitions of `retainedJobs`. */
  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void;
  /** The job runs: a TaskManager that registers from now on loses what it kept of this job. */
  onJobRunning(): void;
  /**
   * Resolves once every vertex initialization recorded so far is durable, where a task may
   * outlive this leader (keep-running-tasks): the next leader adopts a kept task only if its log
   * has the task's vertex initialized. The scheduler deploys a newly initialized vertex after it.
   * Undefined when there is nothing to wait for.
   */
  vertexDecisionsDurable(): Promise<void> | undefined;
  /** Stops recording; `cleanUp` deletes the log (the job is globally terminal). */
  stop(cleanUp: boolean): Promise<void>;
}
