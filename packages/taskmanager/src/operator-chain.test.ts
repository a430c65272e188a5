import { describe, expect, it } from 'vitest';
import { buildJob, defineJob, type ReduceTransformation } from '@rebound/api';
import { KeyedReducer } from './operator-chain.js';

async function reduceOf(kind: 'sum' | 'count'): Promise<ReduceTransformation> {
  const def = defineJob('agg', (env) => {
    const keyed = env.generateSequence(0, 9).map((n) => [`k${n % 3}`, n] as [string, number]).keyBy((t) => t[0]);
    (kind === 'sum' ? keyed.sum(1) : keyed.count()).writeAsText('/tmp/unused');
  });
  const { operators } = await buildJob(def, []);
  return [...operators.values()].find((t): t is ReduceTransformation => t.kind === 'reduce')!;
}

describe('KeyedReducer', () => {
  it.each(['sum', 'count'] as const)('folds %s in place to what the plain reduce function gives, without touching inputs', async (kind) => {
    const reduce = await reduceOf(kind);
    expect(reduce.inPlace).toBeDefined();
    const records: [string, number][] = Array.from({ length: 50 }, (_, i) => [`k${i % 4}`, i]);
    const inputs = JSON.stringify(records);
    const key = (r: unknown) => (r as [string, number])[0];
    const inPlace = new KeyedReducer(key, reduce);
    const plain = new KeyedReducer(key, { fn: reduce.fn });
    for (const r of records) {
      inPlace.add(r);
      plain.add(r);
    }
    const a: unknown[] = [];
    const b: unknown[] = [];
    inPlace.drain((r) => a.push(r));
    plain.drain((r) => b.push(r));
    expect(a).toEqual(b);
    expect(JSON.stringify(records)).toBe(inputs);
    expect(inPlace.size).toBe(0);
  });
});
