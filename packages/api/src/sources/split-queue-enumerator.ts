import { SourceStateError } from '../errors.js';
import type { SourceSplit, SplitEnumerator, SplitEnumeratorContext } from '../source.js';

/** Enumerator state of the built-in sources: the splits not yet handed out (JSON). */
export interface SplitQueueState<Split extends SourceSplit> {
  readonly splits: Split[];
  /** How many splits the source has in all (sets each reader's fair share). */
  readonly total?: number;
}

/**
 * Hands out a fixed list of splits in order, at most a fair share (ceil(total / parallelism)) to
 * each reader: with as many subtasks as splits, each subtask reads one split, so a failure or a
 * JobMaster failover reruns one split's worth of work and progress shows in finished tasks, instead
 * of the first readers draining the whole queue. Its state is the list of unassigned splits, so it
 * supports batch snapshots: assigned splits are tracked by the SourceCoordinator (and come back
 * through addSplitsBack when their reader fails).
 */
export class SplitQueueEnumerator<Split extends SourceSplit> implements SplitEnumerator<Split, SplitQueueState<Split>> {
  readonly supportsBatchSnapshot: boolean = true;
  private readonly queue: Split[];
  private readonly total: number;
  private readonly assigned = new Map<number, number>();

  constructor(
    private readonly ctx: SplitEnumeratorContext<Split>,
    splits: readonly Split[],
    total?: number,
  ) {
    this.queue = [...splits];
    this.total = Math.max(total ?? 0, splits.length);
  }

  start(): void {}

  private fairShare(): number {
    return Math.max(1, Math.ceil(this.total / Math.max(1, this.ctx.parallelism)));
  }

  handleSplitRequest(subtask: number): void {
    const taken = this.assigned.get(subtask) ?? 0;
    if (taken < this.fairShare()) {
      for (let split = this.queue.shift(); split; split = this.queue.shift()) {
        if (this.ctx.assignSplit(split, subtask) !== false) {
          this.assigned.set(subtask, taken + 1);
          return;
        }
      }
    }
    this.ctx.signalNoMoreSplits(subtask);
  }

  addSplitsBack(splits: Split[], subtask: number): void {
    // Front of the queue: returned work is the oldest outstanding work.
    this.queue.unshift(...splits);
    // Below zero when the reader held more than this enumerator gave it: one restored after a
    // JobMaster failover counts from zero while readers kept running through it go on asking. The
    // reset reader may then take every split it gave back; with the count floored at zero it got
    // its share and was told there were no more, and the rest stayed queued with every other
    // reader finished (chaos seed 277 lost a file's words that way).
    this.assigned.set(subtask, (this.assigned.get(subtask) ?? 0) - splits.length);
  }

  addReader(_subtask: number): void {}

  snapshotState(_checkpointId: number): SplitQueueState<Split> {
    return { splits: this.queue.map((s) => ({ ...s })), total: this.total };
  }

  /** Splits not yet assigned (for tests and diagnostics). */
  remaining(): readonly Split[] {
    return this.queue;
  }

  close(): void {}
}

/** Validates a restored state: it comes from disk and may have been written by another version. */
export function splitsOfState<Split extends SourceSplit>(sourceName: string, state: unknown): Split[] {
  const splits = (state as { splits?: unknown } | null)?.splits;
  if (!Array.isArray(splits) || !splits.every((s) => typeof (s as SourceSplit | null)?.id === 'string')) {
    throw new SourceStateError(
      `${sourceName}: enumerator state must be {"splits": [{"id": ...}, ...]}, got ${JSON.stringify(state)}`,
    );
  }
  return splits as Split[];
}

/** The `total` a restored state carries (absent in states of older versions). */
export function totalOfState(state: unknown): number | undefined {
  const total = (state as { total?: unknown } | null)?.total;
  return typeof total === 'number' ? total : undefined;
}
