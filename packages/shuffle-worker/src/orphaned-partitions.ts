import type { Clock } from '@rebound/core';

/**
 * Which jobs' partitions a shuffle worker may delete as orphans: those no leader has named as
 * live (ShuffleWorkerHeartbeatResponse.live_jobs) for `shuffle-worker.partition.expiry-timeout`.
 *
 * A job the worker holds but no leader ever named counts from when the worker first held it
 * (its first write, or this process's start for a job found on disk): a worker restarted while
 * no leader is elected keeps what it found for a whole timeout, however old the files are.
 * Time comes from the injected clock, so the rule is tested without timers.
 */
export class OrphanedPartitions {
  /** Held jobs, with when a leader last named them (or when they were first held). */
  private readonly lastNamedMs = new Map<string, number>();

  constructor(
    private readonly timeoutMs: number,
    private readonly clock: Clock,
  ) {}

  /** The worker holds (or is writing) partitions of `jobId`; a job already held keeps its time. */
  held(jobId: string): void {
    if (!this.lastNamedMs.has(jobId)) this.lastNamedMs.set(jobId, this.clock.now());
  }

  /** A leader named these jobs as live. Jobs the worker does not hold are ignored. */
  named(jobIds: Iterable<string>): void {
    const now = this.clock.now();
    for (const jobId of jobIds) if (this.lastNamedMs.has(jobId)) this.lastNamedMs.set(jobId, now);
  }

  /** The job's partitions are gone (released or expired). */
  forget(jobId: string): void {
    this.lastNamedMs.delete(jobId);
  }

  /** Held jobs no leader has named for the timeout, oldest first. */
  expired(): string[] {
    const now = this.clock.now();
    return [...this.lastNamedMs]
      .filter(([, at]) => now - at >= this.timeoutMs)
      .sort((a, b) => a[1] - b[1])
      .map(([jobId]) => jobId);
  }

  /** How long ago `jobId` was last named (or first held); undefined if not held. */
  unnamedForMs(jobId: string): number | undefined {
    const at = this.lastNamedMs.get(jobId);
    return at === undefined ? undefined : this.clock.now() - at;
  }
}
