import { ErrorCode, ReboundError } from '@rebound/core';
import type { SourceSplit, SplitEnumerator, SplitEnumeratorContext } from '../source.js';

/** Enumerator state of the built-in sources: the splits not yet handed out (JSON). */
export interface SplitQueueState<Split extends SourceSplit> {
  readonly splits: Split[];
}

/**
 * Hands out a fixed list of splits, first come first served. Its whole state is the list of
 * unassigned splits, so it supports batch snapshots: assigned splits are tracked by the
 * SourceCoordinator (and come back through addSplitsBack when their reader fails).
 */
export class SplitQueueEnumerator<Split extends SourceSplit>
  implements SplitEnumerator<Split, SplitQueueState<Split>>
{
  readonly supportsBatchSnapshot: boolean = true;
  private readonly queue: Split[];

  constructor(
    private readonly ctx: SplitEnumeratorContext<Split>,
    splits: readonly Split[],
  ) {
    this.queue = [...splits];
  }

  start(): void {}

  handleSplitRequest(subtask: number): void {
    const split = this.queue.shift();
    if (split) this.ctx.assignSplit(split, subtask);
    else this.ctx.signalNoMoreSplits(subtask);
  }

  addSplitsBack(splits: Split[], _subtask: number): void {
    // Front of the queue: returned work is the oldest outstanding work.
    this.queue.unshift(...splits);
  }

  addReader(_subtask: number): void {}

  snapshotState(_checkpointId: number): SplitQueueState<Split> {
    return { splits: this.queue.map((s) => ({ ...s })) };
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
    throw new ReboundError(
      ErrorCode.ILLEGAL_STATE,
      `${sourceName}: enumerator state must be {"splits": [{"id": ...}, ...]}, got ${JSON.stringify(state)}`,
    );
  }
  return splits as Split[];
}
