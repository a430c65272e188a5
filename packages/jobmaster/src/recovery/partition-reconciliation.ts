import { partitionKey } from '@rebound/core';
import type { PartitionWithMetrics } from '../shuffle/shuffle-master.js';

/**
 * Follows the partitions that holders (through the ShuffleMaster) report of a job while a new
 * leader reconciles, and tells when every needed one is back.
 *
 * A partition counts only when the holder that the finished event names reports it; a copy
 * reported by any other holder is released, not read. Partition ids carry
 * the deploying leader's epoch, so a rerun after a torn tail no longer repeats an id (chaos seed
 * 2157 found that before they did); this check is the second line of defence.
 */
/** What ended a reconnect wait (RecoveryReport.reconnect_wait_ended). */
export type ReconnectWaitEnd = 'all-reported' | 'holders-settled' | 'timeout';

export class PartitionReconciliation {
  /** Keys of the partitions each holder reported. */
  private readonly reported = new Map<string, Set<string>>();
  private readonly found = new Set<string>();
  private wake: (() => void) | undefined;

  /**
   * `needed`: partition key → ids of the holders that keep it (its producer's TaskManager, or the
   * shuffle workers it wrote to); one of them reporting it is enough. `awaitedTasks`: executions
   * (keys) whose attempts may have kept running through the failover (keep-running-tasks): the
   * wait also ends early only once some TaskManager reported each (`hasTask`). `allSettled`:
   * every TaskManager that may hold something of the job answered or is known gone, so nothing
   * more can come; the wait ends then too.
   */
  constructor(
    private readonly needed: ReadonlyMap<string, readonly string[]>,
    private readonly awaitedTasks: readonly string[] = [],
    private readonly hasTask: (key: string) => boolean = () => true,
    private readonly allSettled: () => boolean = () => false,
  ) {}

  /** Something `hasTask` or `allSettled` reads changed: check again. */
  recheck(): void {
    this.wake?.();
  }

  /** Whether holder `holderId` reported partition `key`. */
  reportedBy(key: string, holderId: string): boolean {
    return this.reported.get(holderId)?.has(key) ?? false;
  }

  /** Reports arrived (perhaps none: a holder answered with nothing); the wait checks again. */
  add(reports: readonly PartitionWithMetrics[]): void {
    for (const { holder, partition } of reports) {
      if (!partition.partition_id) continue;
      const key = partitionKey(partition.partition_id);
      let keys = this.reported.get(holder.id);
      if (!keys) this.reported.set(holder.id, (keys = new Set()));
      keys.add(key);
      if (this.needed.get(key)?.includes(holder.id)) this.found.add(key);
    }
    this.wake?.();
  }

  /** Whether the producing holder reported the needed partition `key`. */
  has(key: string): boolean {
    return this.found.has(key);
  }

  allNeededReported(): boolean {
    return this.found.size === this.needed.size && this.awaitedTasks.every((k) => this.hasTask(k));
  }

  /**
   * Resolves when every needed partition was reported, or everyone settled, or after `timeoutMs`,
   * saying which.
   */
  async wait(timeoutMs: number): Promise<ReconnectWaitEnd> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (this.allNeededReported()) return 'all-reported';
      if (this.allSettled()) return 'holders-settled';
      const left = deadline - Date.now();
      if (left <= 0) return 'timeout';
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, left);
        this.wake = done;
        function done(): void {
          clearTimeout(t);
          resolve();
        }
      });
      this.wake = undefined;
    }
  }
}
