import { describe, expect, it } from 'vitest';
import { ReboundError } from '@rebound/core';
import { NO_CHECKPOINT, type SourceSplit, type SplitEnumeratorContext } from '../source.js';
import { computeRangeSplits, rowGeneratorSource, sequenceSource, type RangeSplit } from './generator-sources.js';
import { legacySequenceSource } from './legacy-sequence-source.js';

function ctx<S extends SourceSplit>(assigned: S[], noMore: number[] = []): SplitEnumeratorContext<S> {
  return {
    parallelism: 2,
    assignSplit: (s) => {
      assigned.push(s);
    },
    signalNoMoreSplits: (t) => {
      noMore.push(t);
    },
  };
}

async function readSplit<T>(read: (s: RangeSplit) => AsyncIterable<T[]>, s: RangeSplit): Promise<T[][]> {
  const out: T[][] = [];
  for await (const b of read(s)) out.push(b);
  return out;
}

describe('generator sources', () => {
  it('splits a range into contiguous pieces', () => {
    expect(computeRangeSplits(0, 10, 4)).toEqual([
      { id: 'range-0-4', start: 0, end: 4 },
      { id: 'range-4-8', start: 4, end: 8 },
      { id: 'range-8-10', start: 8, end: 10 },
    ]);
    expect(computeRangeSplits(5, 5, 4)).toEqual([]);
  });

  it('generates from..to inclusive, in batches', async () => {
    const src = sequenceSource(-2, 7, { splitSize: 4, batchSize: 3 });
    expect(src.estimateSplits()).toBe(3);
    const splits: RangeSplit[] = [];
    const e = src.createEnumerator(ctx(splits));
    // Two readers, three splits: each reader gets at most its fair share (two).
    for (let i = 0; i < 3; i++) e.handleSplitRequest(i % 2);
    const reader = src.createReader();
    const batches = [];
    for (const s of splits) batches.push(...(await readSplit((x) => reader.read(x), s)));
    expect(batches).toEqual([[-2, -1, 0], [1], [2, 3, 4], [5], [6, 7]]);
  });

  it('maps indexes to rows and round-trips its enumerator state', async () => {
    const src = rowGeneratorSource(5, (i) => ({ i, sq: i * i }), { splitSize: 2 });
    const first: RangeSplit[] = [];
    const e = src.createEnumerator(ctx(first));
    e.handleSplitRequest(0);
    const state = JSON.parse(JSON.stringify(e.snapshotState(NO_CHECKPOINT)));
    expect(state).toEqual({
      splits: [
        { id: 'range-2-4', start: 2, end: 4 },
        { id: 'range-4-5', start: 4, end: 5 },
      ],
      total: 3,
    });
    const again: RangeSplit[] = [];
    const noMore: number[] = [];
    const r = src.restoreEnumerator(ctx(again, noMore), state);
    r.addSplitsBack(first, 0);
    for (let i = 0; i < 4; i++) r.handleSplitRequest(i % 2);
    expect(again.map((s) => s.id)).toEqual(['range-0-2', 'range-2-4', 'range-4-5']);
    expect(noMore).toEqual([1]);
    const rows = await readSplit((x) => src.createReader().read(x), again[2]!);
    expect(rows).toEqual([[{ i: 4, sq: 16 }]]);
  });

  it('slowed down, hands the task one record at a time', async () => {
    const src = rowGeneratorSource(3, (i) => i * 10, { batchSize: 100, recordDelayMs: 1 });
    const splits: RangeSplit[] = [];
    src.createEnumerator(ctx(splits)).handleSplitRequest(0);
    expect(await readSplit((x) => src.createReader().read(x), splits[0]!)).toEqual([[0], [10], [20]]);
  });

  it('validates its arguments', () => {
    expect(() => rowGeneratorSource(3, (i) => i, { recordDelayMs: -1 })).toThrow(
      /recordDelayMs must be an integer >= 0/,
    );
    expect(() => sequenceSource(5, 3)).toThrow(/generateSequence: to must be an integer >= 4/);
    expect(() => rowGeneratorSource(-1, (i) => i)).toThrow(/count must be an integer >= 0/);
    expect(() => sequenceSource(0, 3, { splitSize: 0 })).toThrow(/splitSize/);
  });
});

describe('legacy sequence source', () => {
  it('works as a source but cannot snapshot or restore its enumerator', async () => {
    const src = legacySequenceSource(1, 4, { splitSize: 2 });
    expect(src.supportsBatchSnapshot).toBe(false);
    const splits: RangeSplit[] = [];
    const e = src.createEnumerator(ctx(splits));
    expect(e.supportsBatchSnapshot).toBe(false);
    e.handleSplitRequest(0);
    e.handleSplitRequest(0);
    e.addSplitsBack([splits[0]!], 0);
    e.handleSplitRequest(1);
    expect(splits.map((s) => s.id)).toEqual(['range-1-3', 'range-3-5', 'range-1-3']);
    expect(await readSplit((x) => src.createReader().read(x), splits[1]!)).toEqual([[3, 4]]);
    const err = (() => {
      try {
        e.snapshotState(NO_CHECKPOINT);
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ReboundError);
    expect(err).toMatchObject({
      code: 'ILLEGAL_STATE',
      message: expect.stringMatching(/does not support batch snapshots/),
    });
    expect(() => src.restoreEnumerator()).toThrow(/no snapshot to restore/);
  });
});

describe('SplitQueueEnumerator fair share', () => {
  it('gives each reader at most ceil(splits / parallelism) and skips splits the context drops', () => {
    const assigned: [string, number][] = [];
    const noMore: number[] = [];
    const dropped = new Set(['range-0-1']);
    const e = sequenceSource(0, 5, { splitSize: 1 }).createEnumerator({
      parallelism: 3,
      assignSplit: (s, t) => {
        if (dropped.has(s.id)) return false;
        assigned.push([s.id, t]);
        return true;
      },
      signalNoMoreSplits: (t) => {
        noMore.push(t);
      },
    });
    for (let i = 0; i < 3; i++) e.handleSplitRequest(0);
    // range-0-1 was consumed elsewhere: it does not count against subtask 0's share of two.
    expect(assigned).toEqual([
      ['range-1-2', 0],
      ['range-2-3', 0],
    ]);
    expect(noMore).toEqual([0]);
    e.handleSplitRequest(1);
    e.handleSplitRequest(1);
    e.handleSplitRequest(2);
    expect(assigned.map(([id]) => id)).toEqual(['range-1-2', 'range-2-3', 'range-3-4', 'range-4-5', 'range-5-6']);
  });
});
