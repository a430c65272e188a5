import { partitionKey } from '@rebound/core';
import type { PartitionWithMetrics__Output } from '@rebound/core';
import type { RegisteredTaskManager } from '../task-manager-registry.js';

export interface ReportedPartition {
  readonly key: string;
  readonly tm: RegisteredTaskManager;
  readonly partition: PartitionWithMetrics__Output;
}

/**
 * Collects the partitions TaskManagers kept for a job while a new leader reconciles, and tells
 * when every needed one is back.
 *
 * A partition counts only when the TaskManager that the finished event names as its producer
 * reports it; a copy reported by any other TaskManager is released, not read. Partition ids carry
 * the deploying leader's epoch, so a rerun after a torn tail no longer repeats an id (chaos seed
 * 2157 found that before they did); this check is the second line of defence.
 */
export class PartitionReconciliation {
  /** Every report, also of the same partition id from several TaskManagers. */
  readonly reported: ReportedPartition[] = [];
  private readonly found = new Set<string>();
  reused = 0;
  private wake: (() => void) | undefined;

  /**
   * `needed`: partition key → id of the TaskManager that produced it. `awaitedTasks`: executions
   * (keys) whose attempts may have kept running through the failover (keep-running-tasks): the
   * wait also ends early only once some TaskManager reported each (`hasTask`). `allSettled`:
   * every TaskManager that may hold something of the job answered or is known gone, so nothing
   * more can come; the wait ends then too.
   */
  constructor(
    private readonly needed: ReadonlyMap<string, string>,
    private readonly awaitedTasks: readonly string[] = [],
    private readonly hasTask: (key: string) => boolean = () => true,
    private readonly allSettled: () => boolean = () => false,
  ) {}

  /** Something `hasTask` or `allSettled` reads changed: check again. */
  recheck(): void {
    this.wake?.();
  }

  /** Whether TaskManager `tmId` reported partition `key`. */
  reportedBy(key: string, tmId: string): boolean {
    return this.reported.some((r) => r.key === key && r.tm.id === tmId);
  }

  add(tm: RegisteredTaskManager, partitions: readonly PartitionWithMetrics__Output[]): void {
    for (const p of partitions) {
      if (!p.partition_id) continue;
      const key = partitionKey(p.partition_id);
      this.reported.push({ key, tm, partition: p });
      if (this.needed.get(key) === tm.id) this.found.add(key);
    }
    this.wake?.();
  }

  /** Whether the producing TaskManager reported the needed partition `key`. */
  has(key: string): boolean {
    return this.found.has(key);
  }

  allNeededReported(): boolean {
    return this.found.size === this.needed.size && this.awaitedTasks.every((k) => this.hasTask(k));
  }

  /** Resolves when every needed partition was reported, or everyone settled, or after `timeoutMs`. */
  async wait(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.allNeededReported() && !this.allSettled()) {
      const left = deadline - Date.now();
      if (left <= 0) return;
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
