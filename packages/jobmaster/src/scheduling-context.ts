import type { Configuration, ExecutionAttemptId__Output, JobGraph__Output, JobState, Logger } from '@rebound/core';
import type { ExecutionGraph } from './execution-graph.js';
import type { JobMasterLeaderContext, JobPersistence } from './job-master-context.js';
import type { OperatorCoordinators } from './operator-coordinators.js';
import type { ShuffleMaster } from './shuffle/shuffle-master.js';
import type { TaskExecutorGateway } from './task-executor-gateway.js';

/** The job as the scheduler sees it: the JobMaster owns its state and decides its end. */
export interface ScheduledJob {
  readonly jobGraph: JobGraph__Output;
  /** The current graph: a restart from scratch replaces it. */
  readonly graph: ExecutionGraph;
  readonly state: JobState;
  failJob(reason: string): Promise<void>;
  failExecution(id: ExecutionAttemptId__Output, reason: string): void;
  /** Every vertex finished: commit the sinks. */
  finishJob(): Promise<void>;
  /** Resolves once the vertex initializations recorded so far are durable (BatchJobRecoveryHandler). */
  vertexDecisionsDurable(): Promise<void> | undefined;
}

/** What the AdaptiveBatchScheduler works with. */
export interface SchedulingContext
  extends
    Pick<JobMasterLeaderContext, 'epoch' | 'address' | 'registry' | 'clock' | 'crashPoints'>,
    Pick<JobPersistence<unknown>, 'partitionReadCapability'> {
  readonly job: ScheduledJob;
  /** The cluster's configuration with the job's on top; every task is deployed with it. */
  readonly jobConfig: Configuration;
  readonly coordinators: OperatorCoordinators;
  /** The restart strategy's delay: a deployment the TaskManager refused for want of a slot waits as long. */
  readonly restartDelayMs: number;
  readonly gateway: TaskExecutorGateway;
  /** Chooses where each producer's partition goes, and tells consumers where to read it. */
  readonly shuffleMaster: Pick<ShuffleMaster, 'registerPartitionWithProducer' | 'holdersOf'>;
  readonly logger: Logger;
}
