import { setTimeout as sleep } from 'node:timers/promises';
import type { Source, SourceReader, SourceReaderContext, SourceSplit, SplitEnumerator, SplitEnumeratorContext } from '@rebound/api';

/**
 * Wraps a source so that its reader sleeps before each batch: the chaos jobs must run long
 * enough for faults to land in the middle of them. The sleep is asynchronous, so heartbeats and
 * partition requests of the TaskManager are served meanwhile. The enumerator is untouched: the
 * wrapped source snapshots and restores exactly like the original.
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

  createEnumerator(ctx: SplitEnumeratorContext<Split>): SplitEnumerator<Split, State> | Promise<SplitEnumerator<Split, State>> {
    return this.inner.createEnumerator(ctx);
  }

  restoreEnumerator(ctx: SplitEnumeratorContext<Split>, state: State): SplitEnumerator<Split, State> | Promise<SplitEnumerator<Split, State>> {
    return this.inner.restoreEnumerator(ctx, state);
  }

  createReader(ctx: SourceReaderContext): SourceReader<T, Split> {
    const reader = this.inner.createReader(ctx);
    const delayMs = this.delayMs;
    return {
      async *read(split: Split): AsyncGenerator<T[]> {
        for await (const batch of reader.read(split)) {
          if (delayMs > 0) await sleep(delayMs);
          yield batch;
        }
      },
      close: () => reader.close?.(),
    };
  }
}
