import type { JobGraph__Output } from '@rebound/core';
import type { ExecutionGraph } from '../execution-graph.js';
import type { OperatorCoordinators } from '../operator-coordinators.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';

/**
 * What recovery needs from the JobMaster (Flink's BatchJobRecoveryContext): the graph to rebuild,
 * the coordinators to restore, and a way to start over.
 */
export interface BatchJobRecoveryContext {
  readonly jobId: string;
  readonly jobGraph: JobGraph__Output;
  /** The current graph; `restartFromScratch` replaces it. */
  readonly graph: ExecutionGraph;
  readonly coordinators: OperatorCoordinators;
  /** The sink file each sink subtask's current attempt writes, by execution vertex key. */
  readonly sinkTemps: Map<string, string>;
  /** The TaskManagers registered with this leader. */
  taskManagers(): RegisteredTaskManager[];
  /** Forgets the graph, coordinators and sink files of the run so far: the job starts over. */
  restartFromScratch(): Promise<void>;
  failJob(reason: string): Promise<void>;
  /** A line for the job's status (`rebound status`). */
  addNote(note: string): void;
}

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
  /** A TaskManager registered with this leader, holding retained partitions of `retainedJobs`. */
  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void;
  /** The job runs: a TaskManager that registers from now on loses what it kept of this job. */
  onJobRunning(): void;
  /** Stops recording; `cleanUp` deletes the log (the job is globally terminal). */
  stop(cleanUp: boolean): Promise<void>;
}
