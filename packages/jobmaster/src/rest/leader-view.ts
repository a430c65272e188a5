import type { ExceptionHistorySnapshot } from '../exception-history.js';
import type { JobGraph__Output, JobStatus, JobSummary, TaskManagerInfo } from '@rebound/core';

/**
 * What the REST layer reads from the leader: the part of LeaderServices it needs, so the REST
 * module depends on an interface and not on how the JobMaster is built.
 */
export interface LeaderView {
  readonly epoch: number;
  readonly electedAt: number;
  readonly registry: { overview(): TaskManagerInfo[] };
  readonly retainedJobsAtRegistration: ReadonlyMap<string, readonly string[]>;
  status(jobId: string): Promise<JobStatus>;
  list(): Promise<JobSummary[]>;
  cancel(jobId: string): Promise<string>;
  graphOf(jobId: string): JobGraph__Output | undefined;
  exceptionHistory(jobId: string): Promise<ExceptionHistorySnapshot>;
  liveJobIds(): string[];
  trackedPartitions(): Map<string, { partitions: number; bytes: number }>;
  /** The shuffle workers registered with the leader, with what each said it holds. */
  shuffleWorkerOverview(): ShuffleWorkerInfo[];
}

/**
 * What the job documents of the REST API are computed from: the leader, or on a standby with no
 * leader to answer, the HA store (ha-store-jobs.ts).
 */
export type JobsSource = Pick<
  LeaderView,
  'registry' | 'list' | 'status' | 'graphOf' | 'exceptionHistory' | 'liveJobIds'
>;

export interface ShuffleWorkerInfo {
  readonly id: string;
  readonly address: string;
  readonly partitions: number;
  readonly bytes: number;
  readonly lastHeartbeatMs: number;
}
