import type { Configuration, JobGraph__Output, Logger } from '@rebound/core';
import type { JobEventManager } from '@rebound/event-store';
import type { ExecutionGraph } from '../execution-graph.js';
import type { JobMasterLeaderContext, JobPersistence } from '../job-master-context.js';
import type { OperatorCoordinators } from '../operator-coordinators.js';
import type { ShuffleMaster } from '../shuffle/shuffle-master.js';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';

/** The job as recovery sees it: the graph to rebuild, and a way to start over. */
export interface RecoveringJob {
  readonly jobId: string;
  readonly jobGraph: JobGraph__Output;
  /** The current graph; `restartFromScratch` replaces it. */
  readonly graph: ExecutionGraph;
  /** Forgets the graph and coordinators of the run so far: the job starts over. */
  restartFromScratch(): Promise<void>;
  /** A line for the job's status (`rebound status`). */
  addNote(note: string): void;
  /** The graph holds the replayed progress now (or was started afresh): its counts may be shown. */
  replayApplied(): void;
}

/**
 * What the DefaultBatchJobRecoveryHandler works with (Flink's BatchJobRecoveryContext): the job,
 * its event log and recovery reports, and the TaskManagers that may hold its partitions.
 */
export interface BatchJobRecoveryContext
  extends
    Pick<
      JobMasterLeaderContext,
      | 'epoch'
      | 'registry'
      | 'clock'
      | 'crashPoints'
      | 'electedAtMs'
      | 'previousLeaderLastHeardMs'
      | 'taskManagerDirectory'
    >,
    Pick<JobPersistence<unknown>, 'recoveries' | 'saveRecoveries'> {
  readonly job: RecoveringJob;
  readonly events: JobEventManager;
  /** The cluster's configuration with the job's on top. */
  readonly jobConfig: Configuration;
  readonly coordinators: OperatorCoordinators;
  readonly gateway: TaskExecutorGateway;
  /** Where the job's partitions are kept; snapshotted with finished events, restored on replay. */
  readonly shuffleMaster: ShuffleMaster;
  readonly logger: Logger;
}
