import { describe, expect, it } from 'vitest';
import {
  avg,
  buildJob,
  count,
  defineJob,
  max,
  min,
  sum,
  type DataSet,
  type ExecutionEnvironment,
  type Transformation,
} from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import { createKeyedAggregator } from './keyed-reducer.js';

/**
 * The reduces behind aggregate, topN and distinct run in place on both sides of the exchange
 * (ReduceTransformation.inPlace), which the reference interpreter does not use: feed them as the
 * runtime does, through a combiner per producer subtask and a reducer per key, and compare.
 */
async function both<T>(
  build: (env: ExecutionEnvironment) => DataSet<T>,
  producers: number,
): Promise<{ runtime: unknown[]; reference: unknown[] }> {
  const built = await buildJob(
    defineJob('t', (env) => {
      build(env).writeAsJsonLines('/out');
    }),
    [],
    { estimateSplits: false },
  );
  const reference = (await runLocally(built)).get('/out')!.map((l) => JSON.parse(l) as unknown);
  // The chain before the reduce: source records through the maps in front of the keyBy.
  const ops = [...built.operators.values()];
  const reduce = ops.find((t) => t.kind === 'reduce')!;
  if (reduce.kind !== 'reduce') throw new Error('no reduce');
  const keyBy = built.operators.get(reduce.input)!;
  if (keyBy.kind !== 'keyBy') throw new Error('no keyBy');
  const apply = (r: unknown, t: Transformation | undefined): unknown[] => {
    if (!t) return [r];
    if (t.kind === 'map') return [t.fn(r)];
    if (t.kind === 'flatMap') return [...t.fn(r)];
    if (t.kind === 'filter') return t.fn(r) ? [r] : [];
    return [r];
  };
  const before = ops.slice(1, ops.indexOf(keyBy));
  const after = ops.slice(ops.indexOf(reduce) + 1).filter((t) => t.kind !== 'sink');
  const src = ops[0]!;
  if (src.kind !== 'source') throw new Error('no source');
  const records: unknown[] = [];
  const r = src.source.createReader({ subtask: 0, parallelism: 1, attempt: 0 });
  for await (const batch of r.read({ id: 'range-0-1000', start: 0, end: 1000 } as never)) records.push(...batch);
  const combiners = Array.from({ length: producers }, () => createKeyedAggregator(keyBy.keySelector, reduce));
  records.forEach((rec, i) => {
    let rs = [rec];
    for (const t of before) rs = rs.flatMap((x) => apply(x, t));
    for (const x of rs) combiners[i % producers]!.add(x);
  });
  const reducer = createKeyedAggregator(keyBy.keySelector, reduce);
  for (const c of combiners) c.drain((x) => reducer.add(JSON.parse(JSON.stringify(x)) as unknown));
  let out: unknown[] = [];
  reducer.drain((x) => out.push(x));
  for (const t of after) out = out.flatMap((x) => apply(x, t));
  return { runtime: out, reference };
}

const rows = (env: ExecutionEnvironment) =>
  env.generateRows(1000, (i) => ({ i, k: i % 7 === 0 ? 0 : i % 13, v: i % 5 === 0 ? null : (i * 37) % 101 }));

const sorted = (xs: unknown[]): string[] => xs.map((x) => JSON.stringify(x)).sort();

describe('in-place reduces of the relational operators, combined across producers', () => {
  it('aggregate', async () => {
    const { runtime, reference } = await both(
      (env) =>
        rows(env)
          .groupBy('k')
          .aggregate({ s: sum('v'), n: count(), nv: count('v'), a: avg('v'), lo: min('v'), hi: max('i') }),
      3,
    );
    expect(sorted(runtime)).toEqual(sorted(reference));
  });

  it('topN keeps the global order', async () => {
    const { runtime, reference } = await both((env) => rows(env).topN(17, (r) => [r.v, -r.i]), 4);
    expect(runtime).toEqual(reference);
    expect(runtime.length).toBe(17);
  });

  it('distinct', async () => {
    const { runtime, reference } = await both((env) => rows(env).distinct((r) => r.k), 2);
    expect(sorted(runtime.map((r) => (r as { k: number }).k))).toEqual(
      sorted(reference.map((r) => (r as { k: number }).k)),
    );
  });
});
