import type { Configuration } from '@rebound/core';

/**
 * Decides the parallelism of a vertex whose producers have all finished, and which contiguous
 * subpartition range each of its subtasks consumes (Flink's DefaultVertexParallelismAndInputInfosDecider,
 * simplified to the all-to-all case every exchange here is).
 */
export interface ParallelismDeciderOptions {
  minParallelism: number;
  maxParallelism: number;
  avgDataVolumePerTask: number;
  /**
   * Slots of the cluster when the decision is made (0: unknown). A vertex whose data volume asks
   * for fewer subtasks than there are slots still gets up to one per slot, one per
   * MIN_BYTES_PER_SPREAD_TASK of input: otherwise a wordcount's reduce of a few MB runs on one
   * core while the others idle (issue 13).
   */
  slots?: number;
}

/** Below this much input per subtask, a subtask's fixed cost (deploy, partition reads) dominates. */
export const MIN_BYTES_PER_SPREAD_TASK = 1024 * 1024;

export interface SubpartitionRange {
  start: number;
  /** Inclusive. */
  end: number;
}

export interface VertexParallelismAndInputs {
  parallelism: number;
  /** One range per subtask; the same ranges apply to every producer partition of every input. */
  ranges: SubpartitionRange[];
}

/**
 * @param bytesPerSubpartition bytes summed over all producer partitions of all inputs, indexed
 *   by subpartition (every producer writes the same number of subpartitions).
 * @param fixedParallelism the vertex's own parallelism when set (>0): only the ranges are decided.
 */
export function decideParallelismAndInputs(
  bytesPerSubpartition: readonly number[],
  options: ParallelismDeciderOptions,
  fixedParallelism = 0,
): VertexParallelismAndInputs {
  const n = bytesPerSubpartition.length;
  if (n === 0) return { parallelism: 1, ranges: [{ start: 0, end: -1 }] };
  const total = bytesPerSubpartition.reduce((a, b) => a + b, 0);
  let parallelism: number;
  if (fixedParallelism > 0) {
    parallelism = Math.min(fixedParallelism, n);
  } else {
    let wanted = Math.ceil(total / Math.max(1, options.avgDataVolumePerTask));
    const slots = options.slots ?? 0;
    if (wanted < slots) wanted = Math.max(wanted, Math.min(slots, Math.floor(total / MIN_BYTES_PER_SPREAD_TASK)));
    parallelism = Math.max(options.minParallelism, Math.min(options.maxParallelism, wanted));
    parallelism = Math.max(1, Math.min(parallelism, n));
  }
  return { parallelism, ranges: splitEvenly(bytesPerSubpartition, parallelism) };
}

/**
 * Cuts [0, n) into exactly `parts` contiguous, non-empty ranges whose byte sums are as even as the
 * subpartition granularity allows: each cut is placed where the running sum is closest to the
 * ideal boundary k·total/parts, while leaving at least one subpartition for every remaining range.
 * A heavy (skewed) subpartition gets a range of its own instead of dragging its neighbours along.
 */
export function splitEvenly(bytes: readonly number[], parts: number): SubpartitionRange[] {
  const n = bytes.length;
  const p = Math.max(1, Math.min(parts, n));
  const total = bytes.reduce((a, b) => a + b, 0);
  const prefix = new Array<number>(n + 1);
  prefix[0] = 0;
  for (let i = 0; i < n; i++) prefix[i + 1] = prefix[i]! + bytes[i]!;
  const ranges: SubpartitionRange[] = [];
  let start = 0;
  for (let k = 1; k <= p; k++) {
    if (k === p) {
      ranges.push({ start, end: n - 1 });
      break;
    }
    const ideal = total === 0 ? (n * k) / p : (total * k) / p;
    // End (exclusive) may go from start+1 up to n-(p-k) so later ranges stay non-empty.
    const lo = start + 1;
    const hi = n - (p - k);
    let best = lo;
    let bestDiff = Infinity;
    for (let e = lo; e <= hi; e++) {
      const value = total === 0 ? e : prefix[e]!;
      const diff = Math.abs(value - ideal);
      if (diff < bestDiff) {
        bestDiff = diff;
        best = e;
      }
      if (value > ideal) break;
    }
    ranges.push({ start, end: best - 1 });
    start = best;
  }
  return ranges;
}

/** What the decision reads of a vertex whose producers all finished (an ExecutionJobVertex has it). */
export interface VertexToDecide {
  readonly jobVertex: {
    readonly parallelism: number;
    readonly max_parallelism: number;
    readonly inputs: readonly { readonly distribution: string }[];
  };
  readonly producers: readonly {
    readonly vertices: readonly {
      readonly ioMetrics: { readonly subpartition_bytes: readonly number[] } | null | undefined;
    }[];
  }[];
}

export interface VertexDecision extends VertexParallelismAndInputs {
  /** Bytes its producers wrote for it, over all subpartitions. */
  readonly inputBytes: number;
}

/**
 * The adaptive batch scheduler's decision for a non-source vertex whose producers all finished:
 * the bytes every producer subtask reported per subpartition, summed; a vertex that reads only
 * broadcast inputs gets its own parallelism (or 1) and empty ranges; any other goes through
 * decideParallelismAndInputs with the job's `execution.batch.adaptive.auto-parallelism.*`
 * options (the vertex's own max parallelism first). Exported so that the recovery benchmark
 * writes the decision a JobMaster would (bench/recovery/replay.ts).
 *
 * @param numSubpartitions subpartitions each producer wrote (ExecutionGraph.numSubpartitionsFor).
 * @param slots slots of the cluster now (0: unknown); see ParallelismDeciderOptions.slots.
 */
export function decideVertexParallelismAndInputs(
  vertex: VertexToDecide,
  numSubpartitions: number,
  config: Configuration,
  slots = 0,
): VertexDecision {
  const bytes = new Array<number>(numSubpartitions).fill(0);
  for (const producer of vertex.producers) {
    for (const pv of producer.vertices) {
      const sp = pv.ioMetrics?.subpartition_bytes ?? [];
      for (let i = 0; i < numSubpartitions; i++) bytes[i]! += sp[i] ?? 0;
    }
  }
  const inputBytes = bytes.reduce((a, b) => a + b, 0);
  const fixed = vertex.jobVertex.parallelism;
  if (vertex.jobVertex.inputs.every((e) => e.distribution === 'BROADCAST')) {
    const parallelism = fixed || 1;
    return { parallelism, ranges: Array.from({ length: parallelism }, () => ({ start: 0, end: 0 })), inputBytes };
  }
  const decided = decideParallelismAndInputs(
    bytes,
    {
      minParallelism: config.getInt('execution.batch.adaptive.auto-parallelism.min-parallelism'),
      maxParallelism:
        vertex.jobVertex.max_parallelism || config.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism'),
      avgDataVolumePerTask: config.getBytes('execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task'),
      slots,
    },
    fixed,
  );
  return { ...decided, inputBytes };
}
