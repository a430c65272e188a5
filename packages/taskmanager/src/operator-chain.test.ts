import { describe, expect, it } from 'vitest';
import { buildJob, defineJob, type ReduceTransformation } from '@rebound/api';
import { KeyedReducer, KeyedSum, createKeyedAggregator } from './keyed-reducer.js';
import { composeChain } from './operator-chain.js';

async function reduceOf(kind: 'sum' | 'count'): Promise<ReduceTransformation> {
  const def = defineJob('agg', (env) => {
    const keyed = env
      .generateSequence(0, 9)
      .map((n) => [`k${n % 3}`, n] as [string, number])
      .keyBy((t) => t[0]);
    (kind === 'sum' ? keyed.sum(1) : keyed.count()).writeAsText('/tmp/unused');
  });
  const { operators } = await buildJob(def, []);
  return [...operators.values()].find((t): t is ReduceTransformation => t.kind === 'reduce')!;
}

describe('KeyedReducer', () => {
  it.each(['sum', 'count'] as const)(
    'folds %s in place to what the plain reduce function gives, without touching inputs',
    async (kind) => {
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
    },
  );
});

describe('KeyedSum', () => {
  it.each(['sum', 'count'] as const)(
    'is what %s gets and gives the plain reduce function results, in the same order',
    async (kind) => {
      const reduce = await reduceOf(kind);
      expect(reduce.sumOf).toBeDefined();
      expect(createKeyedAggregator((r) => r, reduce)).toBeInstanceOf(KeyedSum);
      // Fractions and -0 too: the sums must be the same IEEE additions in the same order.
      const records: [string, number][] = Array.from({ length: 3000 }, (_, i) => [
        `k${(i * 7) % 1100}`,
        i % 5 === 0 ? 0.1 * i : i % 7 === 0 ? -0 : i,
      ]);
      const inputs = JSON.stringify(records);
      const key = (r: unknown) => (r as [string, number])[0];
      const sum = createKeyedAggregator(key, reduce);
      const plain = new KeyedReducer(key, { fn: reduce.fn });
      for (const r of records) {
        sum.add(r);
        plain.add(r);
      }
      expect(sum.size).toBe(1100);
      const a = [...sum.drainBatches(512)];
      const b: unknown[] = [];
      plain.drain((r) => b.push(r));
      expect(a.map((x) => x.length)).toEqual([512, 512, 76]);
      expect(a.flat()).toEqual(b);
      expect(JSON.stringify(records)).toBe(inputs);
      expect(sum.size).toBe(0);
      // Usable again after draining (a combiner spills and goes on).
      sum.add(['x', 2]);
      sum.add(['x', 3]);
      const again: unknown[] = [];
      sum.drain((r) => again.push(r));
      expect(again).toEqual([['x', 5]]);
    },
  );

  it('sums a property of object records and keeps the other fields of the first record', async () => {
    const def = defineJob('objsum', (env) => {
      env
        .generateSequence(0, 1)
        .map((n) => ({ k: n, v: n, tag: 'a' }))
        .keyBy((r) => r.k)
        .sum('v')
        .writeAsText('/tmp/unused');
    });
    const { operators } = await buildJob(def, []);
    const reduce = [...operators.values()].find((t): t is ReduceTransformation => t.kind === 'reduce')!;
    const sum = createKeyedAggregator((r) => (r as { k: number }).k, reduce);
    sum.add({ k: 1, v: 2, tag: 'first' });
    sum.add({ k: 1, v: 3, tag: 'second' });
    sum.add({ k: 2, v: 1, tag: 'other' });
    const out: unknown[] = [];
    sum.drain((r) => out.push(r));
    expect(out).toEqual([
      { k: 1, v: 5, tag: 'first' },
      { k: 2, v: 1, tag: 'other' },
    ]);
  });

  it('rejects a record whose field is not a number with the user error, first record or later', async () => {
    const reduce = await reduceOf('sum');
    const key = (r: unknown) => (r as [string, unknown])[0];
    const sum = createKeyedAggregator(key, reduce);
    expect(() => sum.add(['a', 'x'])).toThrow(/sum\(1\): field 1 of record .* is not a number/);
    sum.add(['a', 1]);
    expect(() => sum.add(['a', '2'])).toThrow(/sum\(1\): field 1 of record .* is not a number/);
  });
});

describe('KeyedReducer.drainBatches', () => {
  it('hands every result out once, in batches, and forgets them', () => {
    const r = new KeyedReducer((x) => (x as number) % 2500, { fn: (a, b) => (a as number) + (b as number) });
    for (let i = 0; i < 10_000; i++) r.add(i);
    const batches = [...r.drainBatches(1024)];
    expect(batches.map((b) => b.length)).toEqual([1024, 1024, 452]);
    // Key k sums k, k + 2500, k + 5000 and k + 7500.
    const sums = (batches.flat() as number[]).sort((a, b) => a - b);
    expect(sums).toEqual(Array.from({ length: 2500 }, (_, k) => 4 * k + 15_000));
    expect(r.size).toBe(0);
  });
});

describe('composeChain with flatMap', () => {
  /** The records a chain of one flatMap(fn) hands to its sink, for inputs 1, 2, 3. */
  async function flatMapped(fn: (n: number) => Iterable<unknown>): Promise<unknown[]> {
    const def = defineJob('flat', (env) => {
      env.generateSequence(1, 3).flatMap(fn).writeAsText('/tmp/unused');
    });
    const { operators } = await buildJob(def, []);
    const ids = [...operators.values()].filter((t) => t.kind === 'flatMap').map((t) => t.id);
    const out: unknown[] = [];
    const chain = composeChain(operators, ids, (r) => out.push(r));
    for (const n of [1, 2, 3]) chain.push(n);
    return out;
  }

  it('emits what each iterable yields, in order: arrays, holes, generators, sets', async () => {
    expect(await flatMapped((n) => Array.from({ length: n }, (_, i) => `${n}.${i}`))).toEqual([
      '1.0',
      '2.0',
      '2.1',
      '3.0',
      '3.1',
      '3.2',
    ]);
    // A hole is iterated as undefined, as for...of does.
    const holey = (): unknown[] => {
      const a = new Array<unknown>(2);
      a[1] = 'b';
      return a;
    };
    expect(await flatMapped((n) => (n === 2 ? holey() : []))).toEqual([undefined, 'b']);
    expect(
      await flatMapped(function* (n) {
        yield n;
        yield -n;
      }),
    ).toEqual([1, -1, 2, -2, 3, -3]);
    expect(await flatMapped((n) => new Set([n, n, 0]))).toEqual([1, 0, 2, 0, 3, 0]);
  });

  it("goes through an Array subclass's own iterator", async () => {
    class Backwards<T> extends Array<T> {
      override *[Symbol.iterator](): ArrayIterator<T> {
        for (let i = this.length - 1; i >= 0; i--) yield this[i]!;
      }
    }
    expect(await flatMapped((n) => Backwards.from([n, n * 10]))).toEqual([10, 1, 20, 2, 30, 3]);
  });
});

describe('composeChain with process operators', () => {
  async function chainOf(record: (event: string) => void) {
    const def = defineJob('process', (env) => {
      env
        .generateSequence(0, 9)
        .process(() => {
          let seen = 0;
          return {
            open: () => record('a.open'),
            async processBatch(xs: number[], out: (x: number) => void) {
              record(`a.batch(${xs.join(',')})`);
              await Promise.resolve();
              for (const x of xs) out(x * 10);
              seen += xs.length;
            },
            close: (out: (x: number) => void) => {
              record('a.close');
              out(seen);
            },
          };
        })
        .map((x) => x + 1)
        .process(() => ({
          processBatch(xs: number[], out: (x: number) => void) {
            record(`b.batch(${xs.join(',')})`);
            for (const x of xs) out(x);
          },
          close: () => record('b.close'),
        }))
        .writeAsText('/tmp/unused');
    });
    const { operators, graph } = await buildJob(def, []);
    const ids = graph.vertices![0]!.operator_ids!;
    const sunk: unknown[] = [];
    const ctx = {
      subtask: 0,
      parallelism: 1,
      attempt: 0,
      sendRequestToCoordinator: () => Promise.reject(new Error('none')),
    };
    return {
      chain: composeChain(
        operators,
        ids.slice(1),
        (r) => sunk.push(r),
        () => ctx,
      ),
      sunk,
    };
  }

  it('buffers a batch for each process operator and hands it over in chain order; close may emit', async () => {
    const events: string[] = [];
    const { chain, sunk } = await chainOf((e) => events.push(e));
    await chain.open();
    for (const x of [1, 2]) chain.push(x);
    expect(sunk).toEqual([]);
    await chain.flush();
    chain.push(3);
    await chain.close();
    expect(events).toEqual([
      'a.open',
      'a.batch(1,2)',
      'b.batch(11,21)',
      'a.batch(3)',
      'b.batch(31)',
      'a.close',
      'b.batch(4)',
      'b.close',
    ]);
    expect(sunk).toEqual([11, 21, 31, 4]);
  });

  it('creates the process function once per task: subtasks do not share its state', async () => {
    const a = await chainOf(() => undefined);
    const b = await chainOf(() => undefined);
    a.chain.push(1);
    await a.chain.close();
    await b.chain.close();
    // Each close emits the count its own instance saw (plus one, from the map after it).
    expect(a.sunk).toEqual([11, 2]);
    expect(b.sunk).toEqual([1]);
  });
});
