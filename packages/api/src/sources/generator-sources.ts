import { jobInvalid } from '../errors.js';
import type { Source, SourceReader, SourceSplit, SplitEnumeratorContext } from '../source.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { SplitQueueEnumerator, splitsOfState, totalOfState, type SplitQueueState } from './split-queue-enumerator.js';

/** Indexes [start, end) of a generated range. */
export interface RangeSplit extends SourceSplit {
  readonly start: number;
  readonly end: number;
}

export interface GeneratorOptions {
  /** Indexes per split (default: 100 000). */
  readonly splitSize?: number;
  /** Records per batch handed to the task (default 1000). */
  readonly batchSize?: number;
  /** The reader waits this long before each record (demos and failover tests); 0 by default. */
  readonly recordDelayMs?: number;
}

export const DEFAULT_GENERATOR_SPLIT_SIZE = 100_000;
export const DEFAULT_GENERATOR_BATCH_SIZE = 1000;

/** Contiguous ranges of at most `splitSize` indexes covering [start, end). */
export function computeRangeSplits(start: number, end: number, splitSize: number): RangeSplit[] {
  const splits: RangeSplit[] = [];
  for (let s = start; s < end; s += splitSize) {
    const e = Math.min(s + splitSize, end);
    splits.push({ id: `range-${s}-${e}`, start: s, end: e });
  }
  return splits;
}

function checkInt(n: number, what: string, min: number): number {
  if (!Number.isSafeInteger(n) || n < min) throw jobInvalid(`${what} must be an integer >= ${min}, got ${n}`);
  return n;
}

/**
 * Records i ↦ fn(i) for i in [start, end), split into contiguous ranges. `fn` must be pure:
 * a split that is read again after a failure must produce the same records.
 */
export class RangeGeneratorSource<T> implements Source<T, RangeSplit, SplitQueueState<RangeSplit>> {
  readonly supportsBatchSnapshot: boolean = true;
  protected readonly splitSize: number;
  protected readonly batchSize: number;
  private readonly recordDelayMs: number;

  constructor(
    readonly sourceName: string,
    readonly start: number,
    readonly end: number,
    private readonly fn: (i: number) => T,
    options: GeneratorOptions = {},
  ) {
    checkInt(start, `${sourceName}: start`, Number.MIN_SAFE_INTEGER);
    checkInt(end, `${sourceName}: end`, start);
    this.splitSize = checkInt(options.splitSize ?? DEFAULT_GENERATOR_SPLIT_SIZE, `${sourceName}: splitSize`, 1);
    this.batchSize = checkInt(options.batchSize ?? DEFAULT_GENERATOR_BATCH_SIZE, `${sourceName}: batchSize`, 1);
    this.recordDelayMs = checkInt(options.recordDelayMs ?? 0, `${sourceName}: recordDelayMs`, 0);
  }

  splits(): RangeSplit[] {
    return computeRangeSplits(this.start, this.end, this.splitSize);
  }

  estimateSplits(): number {
    return Math.ceil((this.end - this.start) / this.splitSize);
  }

  createEnumerator(ctx: SplitEnumeratorContext<RangeSplit>): SplitQueueEnumerator<RangeSplit> {
    return new SplitQueueEnumerator(ctx, this.splits());
  }

  restoreEnumerator(
    ctx: SplitEnumeratorContext<RangeSplit>,
    state: SplitQueueState<RangeSplit>,
  ): SplitQueueEnumerator<RangeSplit> {
    return new SplitQueueEnumerator(ctx, splitsOfState<RangeSplit>(this.sourceName, state), totalOfState(state));
  }

  createReader(): SourceReader<T, RangeSplit> {
    const { fn, recordDelayMs } = this;
    // Slowed down, a record at a time: the task sees each as it comes.
    const batchSize = recordDelayMs > 0 ? 1 : this.batchSize;
    return {
      async *read(split: RangeSplit): AsyncGenerator<T[]> {
        for (let s = split.start; s < split.end; s += batchSize) {
          if (recordDelayMs > 0) await sleep(recordDelayMs);
          const e = Math.min(s + batchSize, split.end);
          const batch = new Array<T>(e - s);
          for (let i = s; i < e; i++) batch[i - s] = fn(i);
          yield batch;
        }
      },
    };
  }
}

/** The numbers from..to, both inclusive (Flink's generateSequence). */
export function sequenceSource(from: number, to: number, options: GeneratorOptions = {}): RangeGeneratorSource<number> {
  checkInt(from, 'generateSequence: from', Number.MIN_SAFE_INTEGER);
  checkInt(to, 'generateSequence: to', from - 1);
  return new RangeGeneratorSource('Sequence', from, to + 1, (i) => i, options);
}

/** Rows fn(0) .. fn(count - 1). */
export function rowGeneratorSource<T>(
  count: number,
  fn: (i: number) => T,
  options: GeneratorOptions = {},
): RangeGeneratorSource<T> {
  checkInt(count, 'generateRows: count', 0);
  if (typeof fn !== 'function') throw jobInvalid('generateRows: the row function must be a function (i) => row');
  return new RangeGeneratorSource('Rows', 0, count, fn, options);
}
