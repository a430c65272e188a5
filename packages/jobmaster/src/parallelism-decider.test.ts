import { describe, expect, it } from 'vitest';
import { Configuration } from '@rebound/core';
import {
  MIN_BYTES_PER_SPREAD_TASK,
  decideParallelismAndInputs,
  decideVertexParallelismAndInputs,
  splitEvenly,
  type VertexToDecide,
} from './parallelism-decider.js';

const opts = { minParallelism: 1, maxParallelism: 128, avgDataVolumePerTask: 100 };

describe('decideParallelismAndInputs', () => {
  it('follows the bytes with even data', () => {
    const d = decideParallelismAndInputs(new Array(8).fill(50), opts);
    expect(d.parallelism).toBe(4);
    expect(d.ranges).toEqual([
      { start: 0, end: 1 },
      { start: 2, end: 3 },
      { start: 4, end: 5 },
      { start: 6, end: 7 },
    ]);
  });

  it('clamps to min and max parallelism', () => {
    expect(decideParallelismAndInputs([1, 1, 1, 1], { ...opts, minParallelism: 3 }).parallelism).toBe(3);
    expect(decideParallelismAndInputs(new Array(16).fill(1000), { ...opts, maxParallelism: 5 }).parallelism).toBe(5);
  });

  it('spreads a vertex over the free cores: up to one subtask per slot, one per MIN_BYTES_PER_SPREAD_TASK', () => {
    const big = { ...opts, avgDataVolumePerTask: 16 * MIN_BYTES_PER_SPREAD_TASK };
    const eightMb = new Array(8).fill(MIN_BYTES_PER_SPREAD_TASK);
    expect(decideParallelismAndInputs(eightMb, big).parallelism).toBe(1);
    expect(decideParallelismAndInputs(eightMb, { ...big, slots: 2 }).parallelism).toBe(2);
    expect(decideParallelismAndInputs(eightMb, { ...big, slots: 16 }).parallelism).toBe(8);
    // Too little input to be worth a second subtask.
    expect(decideParallelismAndInputs([1000, 1000], { ...big, slots: 2 }).parallelism).toBe(1);
  });

  it('never decides more subtasks than subpartitions', () => {
    expect(decideParallelismAndInputs([10_000, 10_000], opts).parallelism).toBe(2);
  });

  it('gives a skewed subpartition a range of its own', () => {
    const bytes = [10, 10, 10, 1000, 10, 10, 10, 10];
    const d = decideParallelismAndInputs(bytes, { ...opts, avgDataVolumePerTask: 300 });
    expect(d.parallelism).toBe(4);
    const heavy = d.ranges.find((r) => r.start <= 3 && r.end >= 3)!;
    // The heavy subpartition does not drag the whole tail with it.
    expect(d.ranges.filter((r) => r.end < 3 || r.start > 3).length).toBeGreaterThanOrEqual(2);
    expect(heavy.end - heavy.start).toBeLessThanOrEqual(1);
  });

  it('uses a fixed parallelism and only decides ranges', () => {
    const d = decideParallelismAndInputs(new Array(6).fill(1), opts, 3);
    expect(d.parallelism).toBe(3);
    expect(d.ranges).toEqual([
      { start: 0, end: 1 },
      { start: 2, end: 3 },
      { start: 4, end: 5 },
    ]);
  });

  it('covers every subpartition exactly once with non-empty ranges', () => {
    for (let n = 1; n < 40; n++) {
      for (let p = 1; p <= n; p++) {
        const bytes = Array.from({ length: n }, (_, i) => ((i * 7919) % 13) * (i % 3 === 0 ? 100 : 1));
        const ranges = splitEvenly(bytes, p);
        expect(ranges).toHaveLength(p);
        let next = 0;
        for (const r of ranges) {
          expect(r.start).toBe(next);
          expect(r.end).toBeGreaterThanOrEqual(r.start);
          next = r.end + 1;
        }
        expect(next).toBe(n);
      }
    }
  });
});

describe('decideVertexParallelismAndInputs', () => {
  const config = Configuration.of({
    'execution.batch.adaptive.auto-parallelism.min-parallelism': '1',
    'execution.batch.adaptive.auto-parallelism.max-parallelism': '128',
    'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': '100 b',
  });
  const producer = (...subtasks: (number[] | undefined)[]): VertexToDecide['producers'][number] => ({
    vertices: subtasks.map((b) => ({ ioMetrics: b === undefined ? undefined : { subpartition_bytes: b } })),
  });
  const vertex = (
    producers: VertexToDecide['producers'],
    distribution = 'HASH',
    parallelism = 0,
    maxParallelism = 0,
  ): VertexToDecide => ({
    jobVertex: { parallelism, max_parallelism: maxParallelism, inputs: producers.map(() => ({ distribution })) },
    producers,
  });

  it('sums the bytes of every subtask of every producer per subpartition', () => {
    const d = decideVertexParallelismAndInputs(
      vertex([producer([100, 0, 50, 50], [100, 0, 50, 50]), producer([0, 200, 0, 100], undefined)]),
      4,
      config,
    );
    expect(d.inputBytes).toBe(700);
    expect(d).toEqual({
      ...decideParallelismAndInputs([200, 200, 100, 200], {
        minParallelism: 1,
        maxParallelism: 128,
        avgDataVolumePerTask: 100,
      }),
      inputBytes: 700,
    });
  });

  it('takes the vertex max parallelism before the configured one, and keeps a fixed parallelism', () => {
    expect(
      decideVertexParallelismAndInputs(vertex([producer(new Array(8).fill(1000))], 'HASH', 0, 2), 8, config)
        .parallelism,
    ).toBe(2);
    expect(
      decideVertexParallelismAndInputs(vertex([producer(new Array(8).fill(1000))], 'HASH', 3), 8, config).parallelism,
    ).toBe(3);
  });

  it('gives a broadcast-only vertex its own parallelism, or 1, with empty ranges', () => {
    expect(decideVertexParallelismAndInputs(vertex([producer([5000])], 'BROADCAST'), 1, config)).toEqual({
      parallelism: 1,
      ranges: [{ start: 0, end: 0 }],
      inputBytes: 5000,
    });
    expect(decideVertexParallelismAndInputs(vertex([producer([5000])], 'BROADCAST', 2), 1, config).ranges).toHaveLength(
      2,
    );
  });
});
