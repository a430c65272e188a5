import { errorMessage, handleUnary, type Logger, type ShuffleWorkerServiceHandlers } from '@rebound/core';
import type { LeaderCallGuard } from '@rebound/ha';
import type { PartitionStore } from '@rebound/partition';
import type { JobReadCapabilities } from './job-read-capabilities.js';
import type { OrphanedPartitions } from './orphaned-partitions.js';

export interface ShuffleWorkerParts {
  readonly id: string;
  /** Opened with retainOnOpen: the partitions an earlier process of this worker finished are here. */
  readonly store: PartitionStore;
  readonly capabilities: JobReadCapabilities;
  readonly orphans: OrphanedPartitions;
  /** Fences the leader's calls: epoch and this process's session. */
  readonly guard: LeaderCallGuard;
  readonly logger: Logger;
}

/**
 * What a shuffle worker does with the partitions it keeps, whoever leads: admits writers under a
 * job's read capability, answers the leader's ListPartitions and releases, and deletes the
 * partitions of jobs no leader names any more. The process around it (shuffle-worker-process.ts)
 * adds the gRPC server, the HA services and the link to the leader.
 */
export class ShuffleWorker {
  readonly id: string;
  private readonly store: PartitionStore;
  private readonly capabilities: JobReadCapabilities;
  private readonly orphans: OrphanedPartitions;
  private readonly guard: LeaderCallGuard;
  private readonly logger: Logger;

  constructor(parts: ShuffleWorkerParts) {
    this.id = parts.id;
    this.store = parts.store;
    this.capabilities = parts.capabilities;
    this.orphans = parts.orphans;
    this.guard = parts.guard;
    this.logger = parts.logger;
  }

  /**
   * Takes over what an earlier process left on disk. A job's partitions without a readable read
   * capability could be served to no one safely: they are deleted (the leader reruns their
   * producers, as for a lost worker). Every job held starts its orphan clock now.
   */
  async recover(): Promise<void> {
    for (const jobId of this.store.jobsWithPartitions()) {
      if (this.capabilities.has(jobId)) continue;
      const n = await this.store.releaseJob(jobId);
      this.logger.warn(
        { jobId, partitions: n },
        'deleted the partitions of a job whose read capability is missing or unreadable',
      );
    }
    for (const jobId of this.heldJobs()) this.orphans.held(jobId);
    const usage = this.usage();
    if (usage.partitions > 0)
      this.logger.info(
        { ...usage, jobs: this.store.jobsWithPartitions().length },
        'found partitions of an earlier process',
      );
  }

  /** Jobs with finished partitions here (what a registration reports). */
  jobsWithPartitions(): string[] {
    return this.store.jobsWithPartitions();
  }

  /** Jobs with anything here: finished partitions, or a recorded capability (a write may be under way). */
  heldJobs(): string[] {
    return [...new Set([...this.store.jobsWithPartitions(), ...this.capabilities.jobs()])];
  }

  /** Finished partitions held, and the bytes of their data files. */
  usage(): { partitions: number; bytes: number } {
    const { partitions, dataBytes } = this.store.stats();
    return { partitions, bytes: dataBytes };
  }

  /** The admitWriter hook of the WritePartition handler: the job's capability, then its orphan clock. */
  async admitWriter(jobId: string, readCapability: string, partition = jobId): Promise<void> {
    await this.capabilities.admit(jobId, readCapability, partition);
    this.orphans.held(jobId);
  }

  /** The checkReadCapability hook of the PartitionService. */
  checkReadCapability(jobId: string, capability: string, partition: string): void {
    this.capabilities.check(jobId, capability, partition);
  }

  /** A leader that knows this worker named these jobs as live. */
  onLiveJobs(jobIds: readonly string[]): void {
    this.orphans.named(jobIds);
  }

  /** Deletes the partitions of jobs no leader named for the expiry timeout; returns those jobs. */
  async expireOrphans(): Promise<string[]> {
    const expired = this.orphans.expired();
    for (const jobId of expired) {
      const unnamedMs = this.orphans.unnamedForMs(jobId);
      const n = await this.releaseJob(jobId);
      this.logger.warn(
        { event: 'partitions.expired', jobId, partitions: n, unnamedForMs: unnamedMs },
        'deleted the partitions of a job no leader named as live (shuffle-worker.partition.expiry-timeout)',
      );
    }
    return expired;
  }

  private async releaseJob(jobId: string): Promise<number> {
    const n = await this.store.releaseJob(jobId);
    await this.capabilities.forget(jobId);
    this.orphans.forget(jobId);
    return n;
  }

  /**
   * ShuffleWorkerService. `writePartition` is the ingest handler of @rebound/partition (built on
   * admitWriter); the rest are the leader's calls, each fenced by its epoch and our session.
   */
  handlers(writePartition: ShuffleWorkerServiceHandlers['WritePartition']): ShuffleWorkerServiceHandlers {
    return {
      WritePartition: writePartition,
      ListPartitions: handleUnary(async (req) => {
        await this.guard.admit('ListPartitions', req.epoch, req.session_id);
        // A leader asking about a job is running it.
        this.orphans.named([req.job_id]);
        return { partitions: this.store.listFinished(req.job_id) };
      }, this.logger),
      ReleasePartitions: handleUnary(async (req) => {
        await this.guard.admit('ReleasePartitions', req.epoch, req.session_id);
        const released = await this.store.release(req.partitions);
        this.logger.debug({ requested: req.partitions.length, released }, 'released partitions');
        return { released };
      }, this.logger),
      ReleaseJob: handleUnary(async (req) => {
        await this.guard.admit('ReleaseJob', req.epoch, req.session_id);
        const released = await this.releaseJob(req.job_id).catch((err: unknown) => {
          this.logger.error({ jobId: req.job_id, err: errorMessage(err) }, 'cannot release the partitions of a job');
          throw err;
        });
        this.logger.info({ jobId: req.job_id, partitions: released }, 'released the partitions of a job');
        return { released };
      }, this.logger),
    };
  }
}
