import { ErrorCode, ReboundError } from '@rebound/core';
import { groupingKey, type KeySelector, type ReduceTransformation, type Transformation } from '@rebound/api';

export type Emit = (record: unknown) => void;

export function lookup<K extends Transformation['kind']>(
  operators: ReadonlyMap<string, Transformation>,
  id: string,
  kind: K,
): Extract<Transformation, { kind: K }> {
  const op = operators.get(id);
  if (!op || op.kind !== kind) {
    throw new ReboundError(ErrorCode.JOB_INVALID, `operator ${id} is not a ${kind} in the job module (was the module changed?)`);
  }
  return op as Extract<Transformation, { kind: K }>;
}

export function keySelectorOf(operators: ReadonlyMap<string, Transformation>, keyById: string): KeySelector {
  return lookup(operators, keyById, 'keyBy').keySelector;
}

/**
 * Composes the chained one-input operators (map, flatMap, filter) that follow a vertex's head
 * into one push function ending in `sink`. Pushing is synchronous; the caller applies
 * backpressure between batches.
 */
export function composeChain(operators: ReadonlyMap<string, Transformation>, ids: readonly string[], sink: Emit): Emit {
  let next = sink;
  for (let i = ids.length - 1; i >= 0; i--) {
    const op = operators.get(ids[i]!);
    if (!op) throw new ReboundError(ErrorCode.JOB_INVALID, `operator ${ids[i]} is missing from the job module`);
    const downstream = next;
    switch (op.kind) {
      case 'map': {
        const fn = op.fn;
        next = (r) => downstream(fn(r));
        break;
      }
      case 'flatMap': {
        const fn = op.fn;
        next = (r) => {
          for (const out of fn(r)) downstream(out);
        };
        break;
      }
      case 'filter': {
        const fn = op.fn;
        next = (r) => {
          if (fn(r)) downstream(r);
        };
        break;
      }
      case 'sink':
        // The sink writer is the chain's end; it was passed in as `sink`.
        break;
      default:
        throw new ReboundError(ErrorCode.JOB_INVALID, `operator ${op.id} (${op.kind}) cannot be chained`);
    }
  }
  return next;
}

/** Per-key reduce state: the combiner on the producer side and the reduce head on the consumer side. */
export class KeyedReducer {
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
}
