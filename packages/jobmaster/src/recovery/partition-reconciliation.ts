import type { ExecutionVertex } from '../execution-graph.js';
import type { PartitionWithMetrics } from '../shuffle/shuffle-master.js';
import type { FinishedOutput, FinishedOutputs } from './finished-outputs.js';

/** What ended a reconnect wait (RecoveryReport.reconnect_wait_ended). */
export type ReconnectWaitEnd = 'all-reported' | 'holders-settled' | 'timeout';

/**
 * Follows the partitions that holders (through the ShuffleMaster) report of a job while a new
 * leader reconciles, and tells when every needed one is back.
 *
 * A partition counts only when the holder that the finished event names reports it; a copy
 * reported by any other holder is released, not read. Partition ids carry
 * the deploying leader's epoch, so a rerun after a torn tail no longer repeats an id (chaos seed
 * 2157 found that before they did); this check is the second line of defence.
 */
export class PartitionReconciliation {
  /** What holders reported of each producing subtask (any attempt). */
  private readonly reported = new Map<ExecutionVertex, PartitionWithMetrics[]>();
  private readonly found = new Set<FinishedOutput>();
  private wake: (() => void) | undefined;

  /**
   * `outputs`: the finished executions, of which the `needed` ones must come back from one of
   * their holders (its TaskManager, or the shuffle workers it wrote to). `awaitedTasks`:
   * executions (keys) whose attempts may have kept running through the failover
   * (keep-running-tasks): the wait also ends early only once some TaskManager reported each
   * (`hasTask`). `allSettled`: every TaskManager that may hold something of the job answered or
   * is known gone, so nothing more can come; the wait ends then too.
   */
  constructor(
    private readonly outputs: FinishedOutputs,
    private readonly awaitedTasks: readonly string[] = [],
    private readonly hasTask: (key: string) => boolean = () => true,
    private readonly allSettled: () => boolean = () => false,
  ) {}

  /** Something `hasTask` or `allSettled` reads changed: check again. */
  recheck(): void {
    this.wake?.();
  }

  /**
   * Whether holder `holderId` reported the partition of `output` (which may come from a later
   * FinishedOutputs of the same graph: after adoption, say).
   */
  reportedBy(output: FinishedOutput, holderId: string): boolean {
    const copies = this.reported.get(output.ev);
    if (!copies) return false;
    for (const c of copies) {
      const id = c.partition.partition_id!;
      if (c.holder.id === holderId && id.attempt === output.attempt && id.epoch === output.epoch) return true;
    }
    return false;
  }

  /** Reports arrived (perhaps none: a holder answered with nothing); the wait checks again. */
  add(reports: readonly PartitionWithMetrics[]): void {
    for (const r of reports) {
      const id = r.partition.partition_id;
      if (!id) continue;
      // Partitions of no producer of this job can match no finished execution, now or later.
      const ev = this.outputs.producerOf(id);
      if (!ev) continue;
      const copies = this.reported.get(ev);
      if (copies) copies.push(r);
      else this.reported.set(ev, [r]);
      const output = this.outputs.find(id);
      if (output?.needed && output.holders.includes(r.holder.id)) this.found.add(output);
    }
    this.wake?.();
  }

  allNeededReported(): boolean {
    return this.found.size === this.outputs.needed.length && this.awaitedTasks.every((k) => this.hasTask(k));
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
