import type { JobState, RecoveryReport } from '@rebound/core';
import type { ExecutionGraph } from './execution-graph.js';

/** What a job's status is built from. */
export interface JobStatusSource {
  readonly jobId: string;
  readonly name: string;
  readonly state: JobState;
  readonly graph: ExecutionGraph;
  readonly submittedAtMs: number;
  readonly finishedAtMs: number;
  readonly failure: string;
  readonly restarts: number;
  readonly leaderEpoch: number;
  readonly recoveries: RecoveryReport[];
  readonly notes: string[];
  /** Why batch job recovery is off for the job; '' when it is on. */
  readonly jobRecoveryDisabled: string;
  readonly shuffleType: string;
  /** `execution.batch.adaptive.auto-parallelism.max-parallelism` of the job. */
  readonly maxParallelism: number;
}
