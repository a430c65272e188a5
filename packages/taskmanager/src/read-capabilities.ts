import { PermissionDeniedError, sameSecret } from '@rebound/core';
import type { Logger } from '@rebound/core';

/**
 * The partition read capability of each job this TaskManager ran a task of (from the
 * TaskDeploymentDescriptor, which only a leader holding this TaskManager's session can send).
 * ReadSubpartitions of a job's partition must present it: the cluster secret alone lets a client
 * reach the PartitionService, not read another job's data.
 */
export class ReadCapabilities {
  private readonly byJob = new Map<string, string>();

  constructor(private readonly logger: Logger) {}

  /** A leader deployed a task of `jobId` here; every later deployment of the job carries the same one. */
  grant(jobId: string, capability: string): void {
    if (capability) this.byJob.set(jobId, capability);
  }

  /** The job's partitions here are gone (released with the job). */
  forget(jobId: string): void {
    this.byJob.delete(jobId);
  }

  /**
   * Refuses (PERMISSION_DENIED, logged) a read of `jobId`'s partitions without its capability. A job
   * unknown here has no partitions here either (a task is deployed, and its capability granted,
   * before it writes any): the read goes on to fail with PARTITION_NOT_FOUND, which consumers
   * of a restarted TaskManager at the same address must see to have the producer rerun.
   */
  check(jobId: string, given: string, partition: string): void {
    const expected = this.byJob.get(jobId);
    if (expected === undefined || sameSecret(expected, given)) return;
    this.logger.warn(
      { event: 'capability.reject', method: 'ReadSubpartitions', jobId, partition },
      'refused a partition read without the job read capability',
    );
    throw new PermissionDeniedError(
      `ReadSubpartitions of ${partition} refused: the request does not carry the read capability of job ${jobId}`,
    );
  }
}
