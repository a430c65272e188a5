import { groupingKey, type KeySelector, type ReduceTransformation } from '@rebound/api';
import { KeySlots } from './key-slots.js';

export type Emit = (record: unknown) => void;

/** Per-key reduce state: the combiner on the producer side and the reduce head on the consumer side. */
export interface KeyedAggregator {
  add(record: unknown): void;
  readonly size: number;
  /** Hands every result out and forgets them. */
  drain(emit: Emit): void;
  /**
   * Hands the results out `size` at a time, forgetting each as it goes: a reduce head with
   * millions of keys gives the event loop (heartbeats) and backpressure a turn in between,
   * and its memory shrinks while the output grows.
   */
  drainBatches(size: number): Generator<unknown[]>;
}

type ReduceSpec = Pick<ReduceTransformation, 'fn' | 'inPlace' | 'sumOf'>;

/** The fastest exact aggregator for `reduce`: a running number per key for sum(field) and count(). */
export function createKeyedAggregator(key: KeySelector, reduce: ReduceSpec): KeyedAggregator {
  const { inPlace, sumOf } = reduce;
  return inPlace && sumOf ? new KeyedSum(key, inPlace, sumOf) : new KeyedReducer(key, reduce);
}

/** Any associative reduce function; the accumulator is a record (in place for built-in aggregations). */
export class KeyedReducer implements KeyedAggregator {
  private readonly acc = new Map<unknown, unknown>();
  private readonly fn: ReduceTransformation['fn'];
  private readonly inPlace: ReduceTransformation['inPlace'];

  constructor(
    private readonly key: KeySelector,
    reduce: Pick<ReduceTransformation, 'fn' | 'inPlace'>,
  ) {
    this.fn = reduce.fn;
    this.inPlace = reduce.inPlace;
  }

  add(record: unknown): void {
    const k = groupingKey(this.key(record));
    const prev = this.acc.get(k);
    if (this.inPlace) {
      // Accumulators stay private to this map until drain() hands them out and forgets them.
      if (prev === undefined) this.acc.set(k, this.inPlace.init(record));
      else this.inPlace.add(prev, record);
      return;
    }
    this.acc.set(k, prev === undefined && !this.acc.has(k) ? record : this.fn(prev, record));
  }

  get size(): number {
    return this.acc.size;
  }

  drain(emit: Emit): void {
    for (const v of this.acc.values()) emit(v);
    this.acc.clear();
  }

  *drainBatches(size: number): Generator<unknown[]> {
    let batch: unknown[] = [];
    for (const [k, v] of this.acc) {
      this.acc.delete(k);
      batch.push(v);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }
}

const INITIAL_SLOTS = 1024;

/**
 * sum(field) per key. KeySlots numbers the keys; the slot's running sum lives in a
 * Float64Array (the same IEEE additions in the same order as `acc[field] += record[field]`) and
 * the accumulator record, copied from the key's first record by `inPlace.init`, is touched again
 * only when the results go out. Per record that is one map lookup and one array update: no
 * dereference of a per-key object, whose cache miss cost as much as the lookup on 300k keys.
 */
export class KeyedSum implements KeyedAggregator {
  private readonly slots = new KeySlots();
  private accs: unknown[] = [];
  private sums = new Float64Array(INITIAL_SLOTS);
  private readonly field: string | number;

  constructor(
    private readonly key: KeySelector,
    private readonly inPlace: NonNullable<ReduceTransformation['inPlace']>,
    private readonly sumOf: NonNullable<ReduceTransformation['sumOf']>,
  ) {
    this.field = sumOf.field;
  }

  add(record: unknown): void {
    // The field first: a record that fails must not leave its key behind without an accumulator.
    const field = (record as { [f: string]: unknown } | null | undefined)?.[this.field as string];
    const v = typeof field === 'number' ? field : this.sumOf.value(record);
    const n = this.accs.length;
    const slot = this.slots.slotOf(groupingKey(this.key(record)), n);
    if (slot !== n) {
      this.sums[slot] += v;
      return;
    }
    if (n === this.sums.length) {
      const grown = new Float64Array(n * 2);
      grown.set(this.sums);
      this.sums = grown;
    }
    this.accs.push(this.inPlace.init(record));
    this.sums[n] = v;
  }

  get size(): number {
    return this.accs.length;
  }

  drain(emit: Emit): void {
    const { accs, sums } = this.forget();
    for (let i = 0; i < accs.length; i++) {
      const acc = accs[i] as { [f: string]: unknown };
      acc[this.field as string] = sums[i];
      emit(acc);
    }
  }

  *drainBatches(size: number): Generator<unknown[]> {
    const { accs, sums } = this.forget();
    let batch: unknown[] = [];
    for (let i = 0; i < accs.length; i++) {
      const acc = accs[i] as { [f: string]: unknown };
      accs[i] = undefined;
      acc[this.field as string] = sums[i];
      batch.push(acc);
      if (batch.length >= size) {
        yield batch;
        batch = [];
      }
    }
    if (batch.length > 0) yield batch;
  }

  private forget(): { accs: unknown[]; sums: Float64Array } {
    const held = { accs: this.accs, sums: this.sums };
    this.slots.clear();
    this.accs = [];
    this.sums = new Float64Array(INITIAL_SLOTS);
    return held;
  }
}
