import type { TaskManagerDirectory } from './recovery/task-manager-directory.js';
import type { Clock, Configuration, Logger, RecoveryReport } from '@rebound/core';
import type { JobEventManager } from '@rebound/event-store';
import type { CrashPoints } from './crash-points.js';
import type { CommitManifest } from './sink-committer.js';
import type { ShuffleMaster } from './shuffle/shuffle-master.js';
import type { TaskExecutorGateway } from './task-executor-gateway.js';
import type { TaskManagerRegistry } from './task-manager-registry.js';

/** What the JobMaster takes from the leader process around it: the same for every job it runs. */
export interface JobMasterLeaderContext {
  readonly epoch: number;
  readonly jobmasterId: string;
  readonly address: string;
  readonly config: Configuration;
  readonly registry: TaskManagerRegistry;
  /** How calls reach the TaskManagers; gRPC through `registry` unless a test stands in for them. */
  readonly gateway?: TaskExecutorGateway;
  /** The leadership's ShuffleMaster; a TaskManagerShuffleMaster of this JobMaster's own if absent. */
  readonly shuffleMaster?: ShuffleMaster;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Test-only crash points of this process (undefined unless debug.crash.* is set). */
  readonly crashPoints?: CrashPoints;
  /** Something changed that may let other jobs schedule (a slot was freed). */
  onSlotsFreed(): void;
  /** When this leader was elected (for the recovery report). */
  readonly electedAtMs: number;
  /** When the previous leader was last heard of, when this leadership took over its expired lease. */
  readonly previousLeaderLastHeardMs?: number;
  /** Which TaskManagers the HA services know, and which are gone (ends the reconnect wait early). */
  readonly taskManagerDirectory?: TaskManagerDirectory;
}

/**
 * What is kept of one job beyond this leader, and where it goes. `Job` is the JobMaster, which
 * reports itself when terminal: a parameter, so that this file, which the JobMaster's parts may
 * read, needs nothing of the JobMaster.
 */
export interface JobPersistence<Job> {
  /** The job's event log, when batch job recovery is enabled for it. */
  readonly events?: JobEventManager;
  /** Why there is no event log: what a failover of this job costs, in the job's status. */
  readonly jobRecoveryDisabled?: string;
  /** Recovery reports of earlier failovers, kept with the job. */
  readonly recoveries: RecoveryReport[];
  saveRecoveries(jobId: string, reports: readonly RecoveryReport[]): Promise<void>;
  /** Persists the commit manifest before any file is renamed. */
  saveCommitManifest(jobId: string, manifest: CommitManifest): Promise<void>;
  /** The job's partition read capability, shipped in every deployment (unit tests run without one). */
  readonly partitionReadCapability?: string;
  /** Called once when the job reaches a globally terminal state. */
  onTerminal(job: Job): Promise<void>;
}

/** What a JobMaster is constructed with: one object, as the leader builds it. */
export type JobMasterContext<Job> = JobMasterLeaderContext & JobPersistence<Job>;
