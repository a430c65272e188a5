import type { ExecutionAttemptId__Output, JobState, Logger } from '@rebound/core';
import type { AdaptiveBatchScheduler } from './adaptive-batch-scheduler.js';
import type { ExceptionHistory } from './exception-history.js';
import type { ExecutionGraph, ExecutionVertex } from './execution-graph.js';
import type { JobMasterLeaderContext } from './job-master-context.js';
import type { OperatorCoordinators } from './operator-coordinators.js';
import type { FixedDelayRestartBackoffTimeStrategy } from './restart-strategy.js';
import type { TaskExecutorGateway } from './task-executor-gateway.js';

/** The job as failover sees it: the JobMaster owns its state and decides its end. */
export interface FailingJob {
  readonly jobId: string;
  /** The current graph: a restart from scratch replaces it. */
  readonly graph: ExecutionGraph;
  readonly state: JobState;
  failJob(reason: string): Promise<void>;
  /** The execution vertex whose *current* attempt is `id`; stale attempts give undefined. */
  currentAttempt(id: ExecutionAttemptId__Output | null): ExecutionVertex | undefined;
}

/** What Failover works with. */
export interface FailoverContext extends Pick<JobMasterLeaderContext, 'epoch' | 'registry' | 'clock' | 'onSlotsFreed'> {
  readonly job: FailingJob;
  readonly coordinators: OperatorCoordinators;
  /** Restarted tasks go back to it, deployed no earlier than the restart delay. */
  readonly scheduler: Pick<AdaptiveBatchScheduler, 'delayRestart' | 'schedule'>;
  readonly restartStrategy: FixedDelayRestartBackoffTimeStrategy;
  readonly exceptionHistory: ExceptionHistory;
  readonly gateway: TaskExecutorGateway;
  readonly logger: Logger;
}
