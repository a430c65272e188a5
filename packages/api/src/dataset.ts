import type { OperatorCoordinatorProvider, ProcessFunction } from './coordinator.js';
import { checkFunction, identity } from './dataset-checks.js';
import { jobInvalid } from './errors.js';
import { checkField, countReducer, numberField, sumReducer, type FieldOf } from './field-reducers.js';
import { compileAggregation, type AggregateSpecs } from './aggregations.js';
import { checkGroupKey, describeAggregate, groupKeyFunctions, type GroupKey } from './grouping.js';
import { checkOrder, topNReducer, type Order } from './ordering.js';
import { addJoin } from './join.js';
import { OperatorOutput } from './operator-output.js';
import type { JoinType, KeySelector, Record as AnyRecord } from './transformations.js';
import type { MutableTransformation, NewTransformation, TransformationRegistry } from './transformation-registry.js';

/**
 * A distributed collection of records, produced by one operator. Each dataset can feed exactly one
 * operator (no branching): batch results are exchanged through blocking partitions that have one
 * consumer each.
 */
export class DataSet<T> extends OperatorOutput<T> {
  map<R>(fn: (record: T) => R): DataSet<R> {
    checkFunction(fn, 'map');
    return this.derive({ kind: 'map', name: 'Map', input: this.id, fn: fn as (r: AnyRecord) => AnyRecord });
  }

  flatMap<R>(fn: (record: T) => Iterable<R>): DataSet<R> {
    checkFunction(fn, 'flatMap');
    return this.derive({
      kind: 'flatMap',
      name: 'FlatMap',
      input: this.id,
      fn: fn as (r: AnyRecord) => Iterable<AnyRecord>,
    });
  }

  filter(fn: (record: T) => boolean): DataSet<T> {
    checkFunction(fn, 'filter');
    return this.derive({ kind: 'filter', name: 'Filter', input: this.id, fn: fn as (r: AnyRecord) => boolean });
  }

  /**
   * A chained operator that gets the records a batch at a time and may wait, e.g. for its
   * coordinator. `create` is called once per task attempt, so the function it returns may keep
   * state for its subtask. `options.coordinator` creates JobMaster-side logic that the subtasks
   * ask with `ctx.sendRequestToCoordinator` (see coordinator.ts for how it survives a JobMaster
   * failover).
   */
  process<R, Req = never, Res = never, State = unknown>(
    create: () => ProcessFunction<T, R, Req, Res>,
    options: { readonly coordinator?: OperatorCoordinatorProvider<Req, Res, State> } = {},
  ): DataSet<R> {
    checkFunction(create, 'process(create): create');
    const c = options.coordinator;
    if (c !== undefined) {
      if (typeof c !== 'object' || c === null)
        throw jobInvalid('process(create, { coordinator }): coordinator must be an object with create(ctx)');
      checkFunction(c.create, 'process(create, { coordinator }): coordinator.create');
      if (c.restore !== undefined) checkFunction(c.restore, 'process(create, { coordinator }): coordinator.restore');
    }
    return this.derive({
      kind: 'process',
      name: 'Process',
      input: this.id,
      create: create as unknown as () => ProcessFunction<AnyRecord, AnyRecord, unknown, unknown>,
      ...(c ? { coordinator: c as unknown as OperatorCoordinatorProvider<unknown, unknown, unknown> } : {}),
    });
  }

  /** Partitions the records by key. Creates its operator only once consumed (reduce, sum, ...). */
  keyBy<K>(keySelector: (record: T) => K): KeyedDataSet<T, K> {
    checkFunction(keySelector, 'keyBy');
    return new KeyedDataSet<T, K>(this.env, this, keySelector);
  }

  /**
   * Hash join: `left.join(right).where(l => key).equalTo(r => key).with((l, r) => out)`. The right
   * side is built into memory per subtask; the left side probes it.
   */
  join<R>(right: DataSet<R>): JoinBuilder<T, R> {
    return this.joinOf<R, T, R>(right, 'inner');
  }

  /** Every left record: with each matching right record, or once with null when none matches. */
  leftOuterJoin<R>(right: DataSet<R>): JoinBuilder<T, R, T, R | null> {
    return this.joinOf<R, T, R | null>(right, 'leftOuter');
  }

  /** Every right record: with each matching left record, or once with null when none matches. */
  rightOuterJoin<R>(right: DataSet<R>): JoinBuilder<T, R, T | null, R> {
    return this.joinOf<R, T | null, R>(right, 'rightOuter');
  }

  /** Left and right outer join together: unmatched records of either side with null for the other. */
  fullOuterJoin<R>(right: DataSet<R>): JoinBuilder<T, R, T | null, R | null> {
    return this.joinOf<R, T | null, R | null>(right, 'fullOuter');
  }

  private joinOf<R, LA, RA>(right: DataSet<R>, type: JoinType): JoinBuilder<T, R, LA, RA> {
    if (!(right instanceof DataSet)) throw jobInvalid(`${type} join(other): other must be a DataSet of this job`);
    return new JoinBuilder<T, R, LA, RA>(this.env, this, right, type);
  }

  /** The records of both datasets (Flink's union: no deduplication; see distinct). */
  union(other: DataSet<T>): DataSet<T> {
    if (!(other instanceof DataSet)) throw jobInvalid('union(other): other must be a DataSet of this job');
    const l = new KeyedDataSet(this.env, this, identity).keyByTransformation();
    const r = new KeyedDataSet(this.env, other, identity).keyByTransformation();
    const t = this.env.addTransformation({ kind: 'union', name: 'Union', inputs: [l.id, r.id] }, l, r);
    return new DataSet<T>(this.env, t);
  }

  /**
   * One record per distinct key (default: the whole record), the first one seen: per producer
   * subtask in input order, then per consumer in partition order, so a rerun keeps the same one.
   */
  distinct(key?: (record: T) => unknown): DataSet<T> {
    if (key !== undefined) checkFunction(key, 'distinct(key)');
    return this.keyBy(key ?? identity).reduceNamed((a) => a, 'Distinct', { init: (r) => r, add: () => {} });
  }

  /**
   * `fn` gets all records of a subtask at once (after its input ended) and returns the records
   * to emit. Which records form a partition depends on the parallelism and the split assignment.
   */
  mapPartition<R>(fn: (records: T[]) => Iterable<R>): DataSet<R> {
    checkFunction(fn, 'mapPartition');
    return this.process<R>(() => {
      let records: T[] = [];
      return {
        processBatch(batch) {
          for (const r of batch) records.push(r);
        },
        close(out) {
          const all = records;
          records = [];
          for (const r of fn(all)) out(r);
        },
      };
    }).name('MapPartition');
  }

  /**
   * Groups by named fields (one, or an array) or by a key function, for `aggregate`. The result
   * has the key fields (or `key` for a function) next to the aggregates.
   */
  groupBy<K extends keyof T & string>(field: K): GroupedDataSet<T, Pick<T, K>>;
  groupBy<K extends keyof T & string>(fields: readonly K[]): GroupedDataSet<T, Pick<T, K>>;
  groupBy<K>(key: (record: T) => K): GroupedDataSet<T, { key: K }>;
  groupBy(key: string | readonly string[] | ((record: T) => unknown)): GroupedDataSet<T, unknown> {
    return new GroupedDataSet(this, key as string | readonly string[] | ((record: unknown) => unknown));
  }

  /**
   * Orders by `key` (a value or an array of values, see compareKeys; null last); `first(n)` keeps
   * the first n records globally.
   */
  sortBy(key: (record: T) => unknown, order: Order | readonly Order[] = 'asc'): SortedDataSet<T> {
    checkFunction(key, 'sortBy(key)');
    return new SortedDataSet(this, key, checkOrder(order, 'sortBy(key, order)'));
  }

  /**
   * The n records with the largest key, largest first: `sortBy(key, order).first(n)` with order
   * 'desc' by default (per element of an array key when order is an array). Each producer subtask
   * keeps its own top n (the combiner), one subtask merges those: no full sort.
   */
  topN(n: number, key: (record: T) => unknown, order: Order | readonly Order[] = 'desc'): DataSet<T> {
    return this.sortBy(key, order).first(n);
  }

  /** Not for users: the keyed reduce of first(n). */
  firstOf(n: number, key: (record: T) => unknown, order: Order | readonly Order[]): DataSet<T> {
    if (!Number.isSafeInteger(n) || n <= 0) throw jobInvalid(`first(n): n must be a positive integer, got ${n}`);
    const r = topNReducer(n, key, order);
    return this.map((rec) => [rec])
      .name(`TopN(${n}): wrap`)
      .keyBy(() => 0)
      .reduceNamed(r.fn, `TopN(${n})`, r.inPlace)
      .flatMap((best) => best)
      .name(`TopN(${n}): records`);
  }

  private derive<R>(t: NewTransformation): DataSet<R> {
    return new DataSet<R>(this.env, this.env.addTransformation(t, this.transformation));
  }
}

/**
 * Records partitioned by key. The aggregations are associative reduce functions, so the producer
 * pre-aggregates (combines) before the exchange.
 */
export class KeyedDataSet<T, K> {
  constructor(
    private readonly env: TransformationRegistry,
    private readonly input: DataSet<T>,
    private readonly keySelector: (record: T) => K,
  ) {}

  /** `fn` must be associative: it runs as combiner on the producer side and as reducer after the exchange. */
  reduce(fn: (a: T, b: T) => T): DataSet<T> {
    checkFunction(fn, 'reduce');
    return this.reduceNamed(fn, 'Reduce');
  }

  /** Per key, the record with `field` summed (the other fields come from one of the records). */
  sum(field: FieldOf<T>): DataSet<T> {
    const r = sumReducer<T>(checkField(field, 'sum'));
    return this.reduceNamed(r.fn, r.name, r.inPlace, r.sumOf);
  }

  /** Per key, the record with the smallest `field` (the first one on ties). */
  min(field: FieldOf<T>): DataSet<T> {
    const f = checkField(field, 'min');
    return this.reduceNamed(
      (a, b) => (numberField(b, f, 'min') < numberField(a, f, 'min') ? b : a),
      `Min(${String(f)})`,
    );
  }

  /** Per key, the record with the largest `field` (the first one on ties). */
  max(field: FieldOf<T>): DataSet<T> {
    const f = checkField(field, 'max');
    return this.reduceNamed(
      (a, b) => (numberField(b, f, 'max') > numberField(a, f, 'max') ? b : a),
      `Max(${String(f)})`,
    );
  }

  /** `[key, count]` per key; built as map to `[key, 1]` + a summing reduce, so it combines. */
  count(): DataSet<[K, number]> {
    const ks = this.keySelector;
    const ones = this.input.map((r): [K, number] => [ks(r), 1]).name('Count: key');
    const r = countReducer<K>();
    return ones.keyBy((t) => t[0]).reduceNamed(r.fn, 'Count', r.inPlace, r.sumOf);
  }

  /** Not for users: creates the keyBy operator (consuming the input) and returns its id. */
  keyByTransformation(): MutableTransformation {
    return this.env.addTransformation(
      { kind: 'keyBy', name: 'KeyBy', input: this.input.id, keySelector: this.keySelector as KeySelector },
      this.input.producer,
    );
  }

  /** Not for users: a reduce with its operator name and in-place form (see ReduceTransformation). */
  reduceNamed(
    fn: (a: T, b: T) => T,
    name: string,
    inPlace?: { init(r: T): T; add(acc: T, r: T): void },
    sumOf?: { field: string | number; value(r: T): number },
  ): DataSet<T> {
    const keyBy = this.keyByTransformation();
    const t = this.env.addTransformation(
      {
        kind: 'reduce',
        name,
        input: keyBy.id,
        fn: fn as (a: AnyRecord, b: AnyRecord) => AnyRecord,
        ...(inPlace
          ? { inPlace: inPlace as { init(r: AnyRecord): AnyRecord; add(acc: AnyRecord, r: AnyRecord): void } }
          : {}),
        ...(inPlace && sumOf ? { sumOf: sumOf as { field: string | number; value(r: AnyRecord): number } } : {}),
      },
      keyBy,
    );
    return new DataSet<T>(this.env, t);
  }
}

/** L, R: the records of the inputs; LA, RA: what `with` gets for them (null in outer joins). */
export class JoinBuilder<L, R, LA = L, RA = R> {
  constructor(
    private readonly env: TransformationRegistry,
    private readonly left: DataSet<L>,
    private readonly right: DataSet<R>,
    private readonly type: JoinType = 'inner',
  ) {}

  where<K>(leftKey: (left: L) => K): JoinWhere<L, R, K, LA, RA> {
    checkFunction(leftKey, 'join().where');
    return {
      equalTo: (rightKey: (right: R) => K) => {
        checkFunction(rightKey, 'join().where().equalTo');
        return {
          with: <O>(fn: (left: LA, right: RA) => O): DataSet<O> => {
            checkFunction(fn, 'join().where().equalTo().with');
            const lk = new KeyedDataSet(this.env, this.left, leftKey).keyByTransformation();
            const rk = new KeyedDataSet(this.env, this.right, rightKey).keyByTransformation();
            const t = addJoin(this.env, this.type, lk, rk, fn as (l: AnyRecord, r: AnyRecord) => AnyRecord);
            return new DataSet<O>(this.env, t);
          },
        };
      },
    };
  }
}

export interface JoinWhere<L, R, K, LA = L, RA = R> {
  equalTo(rightKey: (right: R) => K): JoinEqualTo<LA, RA>;
}
export interface JoinEqualTo<LA, RA> {
  with<O>(fn: (left: LA, right: RA) => O): DataSet<O>;
}

/** The aggregates of `aggregate(specs)`: numbers, or whatever min/max found; null for no values. */
export type AggregateResult<S extends AggregateSpecs> = {
  [K in keyof S]: S[K] extends { fn: 'min' | 'max' } ? unknown : number | null;
};

/** `groupBy(key)`: records grouped for named aggregations. */
export class GroupedDataSet<T, KeyOut> {
  constructor(
    private readonly input: DataSet<T>,
    private readonly key: GroupKey,
  ) {
    checkGroupKey(key);
  }

  /**
   * One record per group: its key fields and the named aggregates, e.g.
   * `aggregate({ total: sum('amount'), n: count(), avg: avg('price'), lo: min('x'), hi: max('x') })`.
   * Records are mapped to a small state first, so the producer combines states before the exchange.
   */
  aggregate<S extends AggregateSpecs>(specs: S): DataSet<KeyOut & AggregateResult<S>> {
    const agg = compileAggregation(specs);
    const { keyOf, keyFields } = groupKeyFunctions(this.key);
    const names = Object.keys(specs).map((n) => `${n}=${describeAggregate(specs[n]!)}`);
    type State = [unknown, unknown[]];
    return this.input
      .map((r): State => [keyOf(r), agg.init(r)])
      .name('Aggregate: state')
      .keyBy((s) => s[0])
      .reduceNamed(
        (a, b) => {
          const c: State = [a[0], agg.copy(a[1])];
          agg.merge(c[1], b[1]);
          return c;
        },
        `Aggregate(${names.join(', ')})`,
        { init: (s) => [s[0], agg.copy(s[1])], add: (acc, s) => agg.merge(acc[1], s[1]) },
      )
      .map((s) => ({ ...keyFields(s[0]), ...agg.finish(s[1]) }) as KeyOut & AggregateResult<S>)
      .name('Aggregate: result');
  }
}

/** `sortBy(key, order)`: `first(n)` is a global top-N (a local one per subtask, then a merge). */
export class SortedDataSet<T> {
  constructor(
    private readonly input: DataSet<T>,
    private readonly key: (record: T) => unknown,
    private readonly order: Order | readonly Order[],
  ) {}

  /** The first n records in this order, in this order; ties keep the order records arrived in. */
  first(n: number): DataSet<T> {
    return this.input.firstOf(n, this.key, this.order);
  }
}
