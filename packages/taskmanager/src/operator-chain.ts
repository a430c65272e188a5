import { ErrorCode, ReboundError } from '@rebound/core';
import { groupingKey, type KeySelector, type ProcessContext, type ProcessFunction, type ProcessTransformation, type ReduceTransformation, type Transformation } from '@rebound/api';

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

/** The chained operators of a task, from the head's output to the partition or sink. */
export interface OperatorChain {
  /** Pushes one record in; synchronous. */
  readonly push: Emit;
  /** Opens the process operators, in chain order. */
  open(): Promise<void>;
  /**
   * Hands the records buffered for process operators over, in chain order: called after each
   * input batch, before backpressure is applied.
   */
  flush(): Promise<void>;
  /** End of input: flushes, then closes each process operator (it may emit its last records). */
  close(): Promise<void>;
}

interface ProcessStage {
  readonly op: ProcessTransformation;
  readonly fn: ProcessFunction<unknown, unknown, unknown, unknown>;
  readonly out: Emit;
  readonly ctx: ProcessContext<unknown, unknown>;
  buffer: unknown[];
}

/**
 * Composes the chained one-input operators (map, flatMap, filter, process) that follow a vertex's
 * head into one push function ending in `sink`. Pushing is synchronous; a process operator
 * buffers the records of the current batch and handles them, possibly waiting, in `flush`.
 */
export function composeChain(
  operators: ReadonlyMap<string, Transformation>,
  ids: readonly string[],
  sink: Emit,
  contextOf: (operatorId: string) => ProcessContext<unknown, unknown> = noContext,
): OperatorChain {
  const stages: ProcessStage[] = [];
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
      case 'process': {
        const fn = op.create();
        if (typeof fn !== 'object' || fn === null || typeof fn.processBatch !== 'function') {
          throw new ReboundError(ErrorCode.USER_CODE, `operator '${op.name}' (${op.id}): process(create) must return an object with processBatch(records, out, ctx)`);
        }
        const stage: ProcessStage = { op, fn, out: downstream, ctx: contextOf(op.id), buffer: [] };
        stages.unshift(stage);
        next = (r) => {
          stage.buffer.push(r);
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
  const flush = async (): Promise<void> => {
    for (const s of stages) {
      if (s.buffer.length === 0) continue;
      const records = s.buffer;
      s.buffer = [];
      await s.fn.processBatch(records, s.out, s.ctx);
    }
  };
  return {
    push: next,
    async open() {
      for (const s of stages) await s.fn.open?.(s.ctx);
    },
    flush,
    async close() {
      for (const s of stages) {
        await flush();
        await s.fn.close?.(s.out, s.ctx);
      }
      await flush();
    },
  };
}

function noContext(operatorId: string): ProcessContext<unknown, unknown> {
  throw new ReboundError(ErrorCode.ILLEGAL_STATE, `no context for process operator ${operatorId}`);
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

  /**
   * Hands the results out `size` at a time, forgetting each as it goes: a reduce head with
   * millions of keys gives the event loop (heartbeats) and backpressure a turn in between,
   * and its memory shrinks while the output grows.
   */
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
