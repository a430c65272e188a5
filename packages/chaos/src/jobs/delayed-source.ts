import { setTimeout as sleep } from 'node:timers/promises';
import {
  hashKey,
  type Source,
  type SourceReader,
  type SourceReaderContext,
  type SourceSplit,
  type SplitEnumerator,
  type SplitEnumeratorContext,
} from '@rebound/api';

/**
 * Wraps a source so that its reader sleeps before each batch: the chaos jobs must run long
 * enough for faults to land in the middle of them. The sleep is asynchronous, so heartbeats and
 * partition requests of the TaskManager are served meanwhile. The enumerator is untouched: the
 * wrapped source snapshots and restores exactly like the original.
 *
 * Each split gets its own delay, between half and one and a half times `delayMs`, fixed by its
 * id. Equal splits with equal delays would finish in lockstep, a wave of subtasks at a time, and
 * a fault planned "after the 8th finished task" would then fire only when its whole wave and,
 * on a quiet machine, the short stage after it were done. Staggered splits finish one by one,
 * and the gaps between them grow with the delay, which is what `--slowdown` relies on.
 */
export class DelayedSource<T, Split extends SourceSplit, State> implements Source<T, Split, State> {
  readonly sourceName: string;
  readonly supportsBatchSnapshot: boolean;

  constructor(
    private readonly inner: Source<T, Split, State>,
    private readonly delayMs: number,
  ) {
    this.sourceName = inner.sourceName;
    this.supportsBatchSnapshot = inner.supportsBatchSnapshot;
  }

  estimateSplits(): number | undefined {
    return this.inner.estimateSplits?.();
  }

  createEnumerator(
    ctx: SplitEnumeratorContext<Split>,
  ): SplitEnumerator<Split, State> | Promise<SplitEnumerator<Split, State>> {
    return this.inner.createEnumerator(ctx);
  }

  restoreEnumerator(
    ctx: SplitEnumeratorContext<Split>,
    state: State,
  ): SplitEnumerator<Split, State> | Promise<SplitEnumerator<Split, State>> {
    return this.inner.restoreEnumerator(ctx, state);
  }

  createReader(ctx: SourceReaderContext): SourceReader<T, Split> {
    const reader = this.inner.createReader(ctx);
    const delayMs = this.delayMs;
    return {
      async *read(split: Split): AsyncGenerator<T[]> {
        const splitDelayMs = splitDelay(delayMs, split.id);
        for await (const batch of reader.read(split)) {
          if (splitDelayMs > 0) await sleep(splitDelayMs);
          yield batch;
        }
      },
      close: () => reader.close?.(),
    };
  }
}

/** `delayMs` scaled by a factor in [0.5, 1.5) that the hash of the split id fixes. */
export function splitDelay(delayMs: number, splitId: string): number {
  return Math.round(delayMs * (0.5 + hashKey(splitId) / 2 ** 32));
}
