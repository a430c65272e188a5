import type { OperatorCoordinatorProvider, ProcessFunction } from './coordinator.js';
import type { Source, SourceSplit } from './source.js';

/**
 * The operators of a job, as the runtime sees them after building the job module. Ids are
 * assigned in construction order (`op-1`, `op-2`, ...), so building the same module with the
 * same arguments on the client, the JobMaster and every TaskManager yields the same ids: the
 * JobGraph names operators by id and each process finds the functions by id.
 */
export type Record = unknown;
export type KeySelector = (record: Record) => unknown;

interface Base {
  readonly id: string;
  readonly name: string;
  /** Explicit parallelism (0 / undefined: decided by config or adaptively). */
  readonly parallelism?: number;
}

export interface SourceTransformation extends Base {
  readonly kind: 'source';
  readonly source: Source<Record, SourceSplit, unknown>;
}
export interface MapTransformation extends Base {
  readonly kind: 'map';
  readonly input: string;
  readonly fn: (record: Record) => Record;
}
export interface FlatMapTransformation extends Base {
  readonly kind: 'flatMap';
  readonly input: string;
  readonly fn: (record: Record) => Iterable<Record>;
}
export interface FilterTransformation extends Base {
  readonly kind: 'filter';
  readonly input: string;
  readonly fn: (record: Record) => boolean;
}
/** Batch-at-a-time operator that may wait, optionally with a coordinator on the JobMaster. */
export interface ProcessTransformation extends Base {
  readonly kind: 'process';
  readonly input: string;
  /** Called once per task attempt: a process function may keep state for its subtask. */
  readonly create: () => ProcessFunction<Record, Record, unknown, unknown>;
  readonly coordinator?: OperatorCoordinatorProvider<unknown, unknown, unknown>;
}
/** Partitions its input by key; consumed by a reduce (not an operator of its own). */
export interface KeyByTransformation extends Base {
  readonly kind: 'keyBy';
  readonly input: string;
  readonly keySelector: KeySelector;
}
/** Associative reduce per key; also usable as the producer-side combiner. */
export interface ReduceTransformation extends Base {
  readonly kind: 'reduce';
  /** The keyBy transformation. */
  readonly input: string;
  readonly fn: (a: Record, b: Record) => Record;
  /**
   * The same reduce in place, for the built-in aggregations: `init` copies a key's first record
   * into an accumulator the runtime owns, `add` folds a record into it. Saves a copy per record.
   */
  readonly inPlace?: { init(record: Record): Record; add(acc: Record, record: Record): void };
  /**
   * Set by sum(field) and count() (with `inPlace`): the runtime may keep each key's running sum as
   * a plain number next to the accumulator `inPlace.init` made of the key's first record, and write
   * it into that accumulator's `field` when it hands the results out. `value` reads a record's
   * field and throws the user error when it is not a number. Saves a record dereference and two
   * checks per record in the hot combiner loop; the sums are added in the same order.
   */
  readonly sumOf?: { readonly field: string | number; value(record: Record): number };
}
export type JoinType = 'inner' | 'leftOuter' | 'rightOuter' | 'fullOuter';

/**
 * Hash join: the right input is built into memory, the left input probes it. Outer joins call
 * `fn` with null for the missing side: left rows without a match as they are probed, right rows
 * without one after the probe, in the order they were built (so a rerun emits the same records).
 */
export interface JoinTransformation extends Base {
  readonly kind: 'join';
  /** keyBy transformations of the two inputs. */
  readonly left: string;
  readonly right: string;
  readonly fn: (left: Record, right: Record) => Record;
  /** Default 'inner'. */
  readonly joinType?: JoinType;
}
/**
 * The records of all inputs (keyBy transformations: the exchange is HASH on the whole record),
 * each input read to its end in order.
 */
export interface UnionTransformation extends Base {
  readonly kind: 'union';
  readonly inputs: readonly string[];
}
export interface SinkTransformation extends Base {
  readonly kind: 'sink';
  readonly input: string;
  /** Output directory; each subtask's lines become one committed file in it. */
  readonly path: string;
  /** Record to line. */
  readonly format: (record: Record) => string;
  /** A first line of every file (a CSV header), without its newline. */
  readonly header?: string;
  /**
   * The sink of collect(): `path` is '' and the leader sets it at submission (the job's collect
   * directory); lines are JSON values, streamed to the client once committed.
   */
  readonly collect?: boolean;
}

export type Transformation =
  | SourceTransformation
  | MapTransformation
  | FlatMapTransformation
  | FilterTransformation
  | ProcessTransformation
  | KeyByTransformation
  | ReduceTransformation
  | JoinTransformation
  | UnionTransformation
  | SinkTransformation;
