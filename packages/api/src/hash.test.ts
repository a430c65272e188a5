import { describe, expect, it } from 'vitest';
import { groupingKey, hashKey, subpartitionOf } from './hash.js';

describe('hashKey', () => {
  it('is stable: fixed values that every process and version must reproduce', () => {
    const values = [
      '',
      'a',
      'hello',
      'zürich',
      '😀',
      0,
      1,
      -1,
      2 ** 31,
      1.5,
      Number.NaN,
      true,
      false,
      null,
      undefined,
      10n,
      [],
      ['a', 1],
      { b: 2, a: 1 },
    ].map(hashKey);
    expect(values).toEqual([
      1826913731, 1019565311, 2058788162, 3925010766, 1522450093, 3221587496, 3656700030, 4141218220, 2931471316,
      4163514729, 923563809, 1726300461, 92598572, 282499791, 2893720707, 2247881409, 4162406785, 185315487, 426292845,
    ]);
  });

  it('distinguishes types and structure but not key order or -0', () => {
    expect(hashKey(1)).not.toBe(hashKey('1'));
    expect(hashKey(true)).not.toBe(hashKey(1));
    expect(hashKey(null)).not.toBe(hashKey(undefined));
    expect(hashKey(['ab', 'c'])).not.toBe(hashKey(['a', 'bc']));
    expect(hashKey([1, [2]])).not.toBe(hashKey([[1], 2]));
    expect(hashKey({ a: 1, b: 2 })).toBe(hashKey({ b: 2, a: 1 }));
    expect(hashKey({ a: 1, b: undefined })).toBe(hashKey({ a: 1 }));
    expect(hashKey(-0)).toBe(hashKey(0));
    expect(hashKey(2 ** 40)).toBe(hashKey(2 ** 40));
    expect(hashKey(new Date(5))).toBe(hashKey(new Date(5)));
    for (const k of ['x', 7, ['a', 2], { k: 'v' }]) {
      const h = hashKey(k);
      expect(Number.isInteger(h) && h >= 0 && h < 2 ** 32).toBe(true);
    }
  });

  it('rejects keys that have no stable encoding', () => {
    expect(() => hashKey(() => 1)).toThrow(/type function cannot be hashed/);
    expect(() => hashKey(new Map())).toThrow(/Map and Set/);
    const cyclic: unknown[] = [];
    cyclic.push(cyclic);
    expect(() => hashKey(cyclic)).toThrow(/nested deeper/);
  });

  it('spreads keys evenly over subpartitions', () => {
    const n = 16;
    const N = 64_000;
    for (const keyOf of [(i: number) => `word-${i}`, (i: number) => i, (i: number) => [i % 7, `k${i}`]]) {
      const counts = new Array<number>(n).fill(0);
      for (let i = 0; i < N; i++) counts[subpartitionOf(keyOf(i), n)]!++;
      const mean = N / n;
      for (const c of counts) expect(Math.abs(c - mean) / mean).toBeLessThan(0.06);
    }
  });

  it('is fast enough for the per-record hot path', () => {
    const keys = Array.from({ length: 200_000 }, (_, i) => `key-${i}`);
    const t0 = performance.now();
    let acc = 0;
    for (const k of keys) acc ^= subpartitionOf(k, 64);
    expect(performance.now() - t0).toBeLessThan(500); // ~20 ms on a laptop core; generous for CI
    expect(acc).toBeGreaterThanOrEqual(0);
  });
});

describe('groupingKey', () => {
  it('keeps primitives and canonicalizes composite keys consistently with hashKey', () => {
    expect(groupingKey('a')).toBe('a');
    expect(groupingKey(1)).toBe(1);
    expect(groupingKey({ a: 1, b: [2, 'x'] })).toBe(groupingKey({ b: [2, 'x'], a: 1 }));
    const distinct = [
      [1],
      ['1'],
      [null],
      [undefined],
      [Number.NaN],
      [new Date(1)],
      [{ $date: 1 }],
      ['D1'],
      [1n],
      ['1n'],
    ];
    const g = new Set(distinct.map(groupingKey));
    const h = new Set(distinct.map(hashKey));
    expect(g.size).toBe(distinct.length);
    expect(h.size).toBe(distinct.length);
    expect(groupingKey(['a'])).not.toBe('["a"]');
  });
});
