import type { OperatorCoordinatorProvider, ProcessFunction } from './coordinator.js';
import { jobInvalid, userCodeError } from './errors.js';
import type { KeySelector, Record as AnyRecord, SinkTransformation } from './transformations.js';
import { checkParallelism, type Mutable, type MutableTransformation, type NewTransformation, type TransformationRegistry } from './transformation-registry.js';

/** The field of a record an aggregation works on: an index for tuples, a property name otherwise. */
export type FieldOf<T> = T extends readonly unknown[] ? number : keyof T & string;

function checkFunction(fn: unknown, what: string): void {
  if (typeof fn !== 'function') throw jobInvalid(`${what}: expected a function, got ${typeof fn}`);
}

function checkName(n: unknown): string {
  if (typeof n !== 'string' || n.trim() === '') throw jobInvalid(`name(n): expected a non-empty string, got ${String(n)}`);
  return n;
}

/**
 * A distributed collection of records, produced by one operator. Each dataset can feed exactly one
 * operator (no branching): batch results are exchanged through blocking partitions that have one
 * consumer each.
 */
export class DataSet<T> {
  /** Not for users: datasets come from ExecutionEnvironment and other datasets. */
  constructor(
    protected readonly env: TransformationRegistry,
    protected readonly transformation: MutableTransformation,
  ) {}

  /** The id of the operator producing this dataset (`op-<n>`). */
  get id(): string {
    return this.transformation.id;
  }

  map<R>(fn: (record: T) => R): DataSet<R> {
    checkFunction(fn, 'map');
    return this.derive({ kind: 'map', name: 'Map', input: this.id, fn: fn as (r: AnyRecord) => AnyRecord });
  }

  flatMap<R>(fn: (record: T) => Iterable<R>): DataSet<R> {
    checkFunction(fn, 'flatMap');
    return this.derive({ kind: 'flatMap', name: 'FlatMap', input: this.id, fn: fn as (r: AnyRecord) => Iterable<AnyRecord> });
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
      if (typeof c !== 'object' || c === null) throw jobInvalid('process(create, { coordinator }): coordinator must be an object with create(ctx)');
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
    if (!(right instanceof DataSet)) throw jobInvalid('join(other): other must be a DataSet of this job');
    return new JoinBuilder<T, R>(this.env, this, right);
  }

  /**
   * Writes one line per record into directory `path` (each subtask's lines become one committed
   * file). Default format: strings as they are, anything else as JSON.
   */
  writeAsText(path: string, format?: (record: T) => string): DataSink {
    if (typeof path !== 'string' || path === '') throw jobInvalid('writeAsText(path): path must be a non-empty string');
    if (format !== undefined) checkFunction(format, 'writeAsText(path, format)');
    const t = this.env.addTransformation(
      { kind: 'sink', name: 'Sink: TextFiles', input: this.id, path: this.env.resolvePath(path), format: (format ?? defaultFormat) as (r: AnyRecord) => string },
      this.transformation,
    );
    return new DataSink(t as Mutable<SinkTransformation>);
  }

  name(name: string): this {
    this.transformation.name = checkName(name);
    return this;
  }

  setParallelism(parallelism: number): this {
    this.transformation.parallelism = checkParallelism(parallelism, `setParallelism on '${this.transformation.name}'`);
    return this;
  }

  /** Not for users: the producing operator. */
  get producer(): MutableTransformation {
    return this.transformation;
  }

  private derive<R>(t: NewTransformation): DataSet<R> {
    return new DataSet<R>(this.env, this.env.addTransformation(t, this.transformation));
  }
}

export function defaultFormat(record: unknown): string {
  return typeof record === 'string' ? record : JSON.stringify(record);
}

export class DataSink {
  constructor(private readonly transformation: Mutable<SinkTransformation>) {}

  get id(): string {
    return this.transformation.id;
  }

  get path(): string {
    return this.transformation.path;
  }

  name(name: string): this {
    this.transformation.name = checkName(name);
    return this;
  }

  setParallelism(parallelism: number): this {
    this.transformation.parallelism = checkParallelism(parallelism, `setParallelism on '${this.transformation.name}'`);
    return this;
  }
}

/** A copy of `record` with `field` set: aggregations never mutate records they were given. */
function withField<T>(record: T, field: string | number, value: unknown): T {
  if (Array.isArray(record)) {
    const copy = record.slice();
    copy[field as number] = value;
    return copy as T;
  }
  return { ...(record as object), [field]: value } as T;
}

function numberField(record: unknown, field: string | number, op: string): number {
  const v = (record as { [k: string]: unknown } | null)?.[field as string];
  if (typeof v !== 'number') {
    throw userCodeError(`${op}(${JSON.stringify(field)}): field ${JSON.stringify(field)} of record ${defaultFormat(record)} is not a number`);
  }
  return v;
}

function checkField(field: unknown, op: string): string | number {
  if (!((typeof field === 'number' && Number.isSafeInteger(field) && field >= 0) || (typeof field === 'string' && field !== ''))) {
    throw jobInvalid(`${op}(field): field must be a tuple index or a property name, got ${String(field)}`);
  }
  return field;
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
    const f = checkField(field, 'sum');
    return this.reduceNamed(
      (a, b) => withField(a, f, numberField(a, f, 'sum') + numberField(b, f, 'sum')),
      `Sum(${String(f)})`,
      {
        init: (r) => withField(r, f, numberField(r, f, 'sum')),
        add: (acc, r) => {
          (acc as { [k: string]: number })[f as string] = numberField(acc, f, 'sum') + numberField(r, f, 'sum');
        },
      },
      { field: f, value: (r) => numberField(r, f, 'sum') },
    );
  }

  /** Per key, the record with the smallest `field` (the first one on ties). */
  min(field: FieldOf<T>): DataSet<T> {
    const f = checkField(field, 'min');
    return this.reduceNamed((a, b) => (numberField(b, f, 'min') < numberField(a, f, 'min') ? b : a), `Min(${String(f)})`);
  }

  /** Per key, the record with the largest `field` (the first one on ties). */
  max(field: FieldOf<T>): DataSet<T> {
    const f = checkField(field, 'max');
    return this.reduceNamed((a, b) => (numberField(b, f, 'max') > numberField(a, f, 'max') ? b : a), `Max(${String(f)})`);
  }

  /** `[key, count]` per key; built as map to `[key, 1]` + a summing reduce, so it combines. */
  count(): DataSet<[K, number]> {
    const ks = this.keySelector;
    const ones = this.input.map((r): [K, number] => [ks(r), 1]).name('Count: key');
    return ones
      .keyBy((t) => t[0])
      .reduceNamed((a, b) => [a[0], a[1] + b[1]], 'Count', {
        init: (r) => [r[0], r[1]],
        add: (acc, r) => {
          acc[1] += r[1];
        },
      }, { field: 1, value: (r) => r[1] });
  }

  /** Not for users: creates the keyBy operator (consuming the input) and returns its id. */
  keyByTransformation(): MutableTransformation {
    return this.env.addTransformation(
      { kind: 'keyBy', name: 'KeyBy', input: this.input.id, keySelector: this.keySelector as KeySelector },
      this.input.producer,
    );
  }

  private reduceNamed(
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
        ...(inPlace ? { inPlace: inPlace as { init(r: AnyRecord): AnyRecord; add(acc: AnyRecord, r: AnyRecord): void } } : {}),
        ...(inPlace && sumOf ? { sumOf: sumOf as { field: string | number; value(r: AnyRecord): number } } : {}),
      },
      keyBy,
    );
    return new DataSet<T>(this.env, t);
  }
}

export class JoinBuilder<L, R> {
  constructor(
    private readonly env: TransformationRegistry,
    private readonly left: DataSet<L>,
    private readonly right: DataSet<R>,
  ) {}

  where<K>(leftKey: (left: L) => K): JoinWhere<L, R, K> {
    checkFunction(leftKey, 'join().where');
    return {
      equalTo: (rightKey: (right: R) => K) => {
        checkFunction(rightKey, 'join().where().equalTo');
        return {
          with: <O>(fn: (left: L, right: R) => O): DataSet<O> => {
            checkFunction(fn, 'join().where().equalTo().with');
            const lk = new KeyedDataSet(this.env, this.left, leftKey).keyByTransformation();
            const rk = new KeyedDataSet(this.env, this.right, rightKey).keyByTransformation();
            const t = this.env.addTransformation(
              { kind: 'join', name: 'Join', left: lk.id, right: rk.id, fn: fn as (l: AnyRecord, r: AnyRecord) => AnyRecord },
              lk,
              rk,
            );
            return new DataSet<O>(this.env, t);
          },
        };
      },
    };
  }
}

export interface JoinWhere<L, R, K> {
  equalTo(rightKey: (right: R) => K): JoinEqualTo<L, R>;
}
export interface JoinEqualTo<L, R> {
  with<O>(fn: (left: L, right: R) => O): DataSet<O>;
}
