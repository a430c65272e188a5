import { partitionKey } from '@rebound/core';
import type { PartitionWithMetrics__Output } from '@rebound/core';
import type { RegisteredTaskManager } from './task-manager-registry.js';

export interface ReportedPartition {
  readonly key: string;
  readonly tm: RegisteredTaskManager;
  readonly partition: PartitionWithMetrics__Output;
}

/**
 * Collects the partitions TaskManagers kept for a job while a new leader reconciles, and tells
 * when every needed one is back.
 */
export class PartitionReconciliation {
  readonly reported = new Map<string, ReportedPartition>();
  reused = 0;
  private wake: (() => void) | undefined;

  constructor(private readonly needed: ReadonlyMap<string, unknown>) {}

  add(tm: RegisteredTaskManager, partitions: readonly PartitionWithMetrics__Output[]): void {
    for (const p of partitions) {
      if (!p.partition_id) continue;
      const key = partitionKey(p.partition_id);
      this.reported.set(key, { key, tm, partition: p });
    }
    this.wake?.();
  }

  allNeededReported(): boolean {
    for (const key of this.needed.keys()) if (!this.reported.has(key)) return false;
    return true;
  }

  /** Resolves when every needed partition was reported, or after `timeoutMs`. */
  async wait(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.allNeededReported()) {
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
