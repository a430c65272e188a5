import type { Clock, JobGraph, JobGraph__Output, Logger, TerminalJobState } from '@rebound/core';
import type { EndpointRegistry } from './endpoints.js';
import type { LeaderEpochSource } from './epoch-fence.js';
import type { LeaderInfo } from './leader-info.js';

/** The component that wants to lead (Flink's LeaderContender): the JobMaster process. */
export interface LeaderContender {
  /**
   * Called once per won election; `epoch` is the fencing token to put on every JM→TM call.
   * `ended` is aborted the moment this leadership ends, before revokeLeadership is delivered:
   * callbacks run one after another, so a grant still starting would otherwise act as leader
   * until its own start-up returned.
   */
  grantLeadership(epoch: number, ended: AbortSignal): void | Promise<void>;
  /** Called when leadership is lost or given up; the contender must stop acting as leader. */
  revokeLeadership(reason: string): void | Promise<void>;
}

/** Flink's LeaderElectionService: one per contending JobMaster process. */
export interface LeaderElection {
  /** Starts contending; resolves after the first attempt (this process then leads or stands by). */
  start(contender: LeaderContender): Promise<void>;
  /** Gives leadership up (a standby takes over without waiting for the lease) and stops contending. */
  stop(): Promise<void>;
  /** True while this process holds a lease it knows has not expired. */
  hasLeadership(): boolean;
  /** The epoch of the current leadership, undefined when not leading. */
  currentEpoch(): number | undefined;
  /** Checks leadership with the backend now; revokes it if it was lost. */
  confirmLeadership(): Promise<boolean>;
  /**
   * When the previous leader was last heard of, if this leadership took over an expired lease and
   * the backend can tell (the file lease's mtime); undefined otherwise.
   */
  previousLeaderLastHeardMs(): number | undefined;
}

/** Told about every new leader (Flink's LeaderRetrievalListener). */
export interface LeaderRetrievalListener {
  onLeaderChange(info: LeaderInfo): void | Promise<void>;
}

/** Flink's LeaderRetrievalService: follows the leader for TaskManagers and clients. */
export interface LeaderRetrieval {
  /** Starts following (file: polling leader.json; etcd: a watch on the leader key). */
  start(listener?: LeaderRetrievalListener): void;
  stop(): void;
  /** The newest leader seen so far. */
  current(): LeaderInfo | undefined;
  /** The current leader, waiting up to `timeoutMs` for one. */
  waitForLeader(timeoutMs: number): Promise<LeaderInfo>;
  /** Reads the leader record now, notifying on a change; returns the newest leader. */
  refresh(): Promise<LeaderInfo | undefined>;
}

/** Contents of `<ha>/jobs/<jobId>/status.json`. */
export interface TerminalJobStatus {
  readonly state: TerminalJobState;
  readonly finishedAtMs: number;
  readonly failure?: string;
}

export interface StoredJob {
  readonly graph: JobGraph__Output;
  /** Absolute path of the bundled job module, importable as is. */
  readonly modulePath: string;
}

export interface StoredJobSummary {
  readonly jobId: string;
  readonly name: string;
  readonly submittedAtMs: number;
  /** Undefined while the job has not reached a terminal state (it is to be run or recovered). */
  readonly status: TerminalJobStatus | undefined;
  /**
   * Why the job's stored files cannot be read (then name and status are unknown). Such a job is
   * listed so that someone can look at it, and never run, recovered or removed automatically.
   */
  readonly damage?: string;
}

/**
 * Submitted jobs and their records (Flink's JobGraphStore plus its job result store): what a new
 * leader needs to take a job over. A store obtained for a leader epoch refuses writes once that
 * epoch no longer leads (etcd: every write is a transaction guarded by the leader key).
 */
export interface JobGraphStore {
  /** Persists a submitted job. Resolves only once it is durable. */
  putJob(graph: JobGraph, moduleBundle: Uint8Array): Promise<void>;
  hasJob(jobId: string): Promise<boolean>;
  getJob(jobId: string): Promise<StoredJob>;
  /** Ids of all stored jobs, terminal or not, sorted. */
  listJobIds(): Promise<string[]>;
  /** Records that a job reached a globally terminal state, so no leader runs it again. */
  markTerminal(jobId: string, status: TerminalJobStatus): Promise<void>;
  getTerminalStatus(jobId: string): Promise<TerminalJobStatus | undefined>;
  listJobs(): Promise<StoredJobSummary[]>;
  listUnfinishedJobs(): Promise<{ readonly jobId: string; readonly damage?: string }[]>;
  removeExpiredJobs(nowMs: number, retentionMs: number): Promise<string[]>;
  putJobAttachment(jobId: string, name: string, data: string | Uint8Array): Promise<void>;
  getJobAttachment(jobId: string, name: string): Promise<Uint8Array | undefined>;
  listJobAttachments(jobId: string): Promise<string[]>;
}

export interface LeaderElectionOptions {
  /** Identity of this contender (the JobMaster id). */
  readonly contenderId: string;
  /** Address TaskManagers and clients reach this JobMaster at (host:port). */
  readonly address: string;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/**
 * Flink's HighAvailabilityServices: everything that must outlive a JobMaster, behind one
 * interface chosen by `high-availability.type`. Nothing outside @rebound/ha reads leader records
 * or lease files directly.
 */
/** What binds a leader's job store to its leadership beyond the epoch. */
export interface LeaderStoreOptions {
  /** Aborted when the leadership ends; calls the HA store did not answer are retried until then. */
  readonly until: AbortSignal;
  onRetry?(what: string, err: Error, attempt: number): void;
}

export interface HighAvailabilityServices {
  readonly type: 'file' | 'etcd';
  /**
   * Shared storage for what is not coordination state: job modules and the JobEventStore
   * (`<storageDir>/jobs/<jobId>/`), as Flink keeps them on a DFS.
   */
  readonly storageDir: string;
  /** Where the leader is recorded, for messages: "HA directory /x" or "etcd http://… (cluster-id c)". */
  describe(): string;
  createLeaderElectionService(options: LeaderElectionOptions): LeaderElection;
  createLeaderRetrievalService(logger: Logger): LeaderRetrieval;
  /** The current leader record, read once; undefined when none is recorded. */
  getLeader(): Promise<LeaderInfo | undefined>;
  /** The epoch of the recorded leader, read fresh each call: TaskManagers' EpochFence confirms newer epochs with it. */
  leaderEpochSource(): LeaderEpochSource;
  /**
   * For a writer acting under `epoch` (the JobEventStore of a leader): the epoch that leads now,
   * above `epoch` as soon as it no longer leads (also when nobody leads).
   */
  fencingEpochSource(epoch: number): () => Promise<number>;
  /** The job store for reading (REST, CLI, standbys); writes through it are refused by etcd, and must not be made. */
  jobGraphStore(): JobGraphStore;
  /**
   * The job store of the leader of `epoch`: writes are fenced by that epoch where the backend can.
   * With `options`, a call the backend does not answer is retried until `options.until` fires.
   */
  leaderJobGraphStore(epoch: number, options?: LeaderStoreOptions): JobGraphStore;
  /** Where every process publishes its gRPC, REST and metrics addresses (one registry per services object). */
  endpoints(): EndpointRegistry;
  /**
   * Fails fast with the fix in the message when a client or TaskManager points at HA state that
   * cannot be used (no such HA directory, etcd unreachable).
   */
  assertUsable(): Promise<void>;
  close(): Promise<void>;
}
