import type { JobGraph, JobGraph__Output } from '@rebound/core';

/** One record of a stored job: its graph, its terminal status, or a named attachment. */
export type JobRecord = 'graph' | 'status' | `attachments/${string}`;

/**
 * The backend half of a JobGraphStore: a small key-value store of each job's records (files under
 * `<storageDir>/jobs/<jobId>/`, or etcd keys under `/<cluster-id>/jobs/<jobId>/`).
 * DefaultJobGraphStore holds what a job is (it exists once its graph record does), the checks on
 * names and states, and the listings built from the records.
 */
export interface JobRecordDriver {
  /** What a job's records are called in a damage message: 'files' or 'records'. */
  readonly recordKind: string;
  /** Where one job's records are, for "inspect or remove …". */
  where(jobId: string): string;
  /** One record's name in messages (a file path, "etcd key …"). */
  nameOf(jobId: string, record: JobRecord): string;
  has(jobId: string, record: JobRecord): Promise<boolean>;
  get(jobId: string, record: JobRecord): Promise<Uint8Array | undefined>;
  /** Writes a record durably (where the backend fences writes, only while the store's epoch leads); `what` names it in a refusal. */
  put(jobId: string, record: JobRecord, data: string | Uint8Array, what: string): Promise<void>;
  /** Names of the job's attachments, sorted. */
  listAttachments(jobId: string): Promise<string[]>;
  /** Ids of the jobs that have a graph record, sorted. */
  jobIds(): Promise<string[]>;
  /** Ids of jobs with a graph but no status, where the backend finds them without reading every status. */
  unfinishedJobIds?(): Promise<string[]>;
  /** Removes every record of a job and its module directory, the graph first. */
  remove(jobId: string): Promise<void>;
  encodeGraph(graph: JobGraph): Uint8Array;
  /** The graph in `bytes`; a ReboundError naming the record when it is damaged. */
  decodeGraph(jobId: string, bytes: Uint8Array): JobGraph__Output;
}
