import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatQ1, lineItem, mergeQ1, q1Acc, wordsOf, type Q1Acc } from '@rebound/example-support';
import { JOB_NAMES, checkOutput, countWords, drawJobParams, expectedLines, wordcountFileText } from './jobs.js';
import { diffSortedLines } from './line-diff.js';
import { Prng } from './prng.js';
import { expectedQ1Lines } from './q1-oracle.js';

describe('chaos jobs', () => {
  it('counts words like the example job documents, without its code', () => {
    const p = drawJobParams(new Prng(5), 'wordcount');
    if (p.job !== 'wordcount') throw new Error('unexpected job');
    const texts = Array.from({ length: p.files }, (_, f) => wordcountFileText(p, f));
    const viaExample = new Map<string, number>();
    for (const t of texts)
      for (const line of t.split('\n')) for (const w of wordsOf(line)) viaExample.set(w, (viaExample.get(w) ?? 0) + 1);
    expect(countWords(texts)).toEqual(viaExample);
    expect(countWords(['Café, CAFÉ!café x1'])).toEqual(
      new Map([
        ['café', 3],
        ['x1', 1],
      ]),
    );
  });

  it('computes TPC-H Q1 from its definition to what the example job folds, without its code', () => {
    for (const seed of [1, 5, 17]) {
      const groups = new Map<string, Q1Acc>();
      for (let i = 0; i < 20_000; i++) {
        const item = lineItem(seed, i);
        if (item.shipdate > '1998-09-02') continue;
        const key = item.returnflag + item.linestatus;
        const acc = groups.get(key);
        groups.set(key, acc ? mergeQ1(acc, q1Acc(item)) : q1Acc(item));
      }
      const viaExample = [...groups.values()].map(formatQ1).sort();
      expect(viaExample).toHaveLength(4);
      expect(expectedQ1Lines(20_000, seed)).toEqual(viaExample);
    }
  });

  it('computes a non-empty expected output for every job', () => {
    for (const job of JOB_NAMES) {
      const lines = expectedLines(drawJobParams(new Prng(1), job));
      expect(lines.length).toBeGreaterThan(0);
      expect([...lines].sort()).toEqual(lines);
    }
  });

  it('reports missing, unexpected and duplicated lines', () => {
    expect(diffSortedLines(['a', 'b', 'c'], ['a', 'b', 'c'])).toEqual([]);
    expect(diffSortedLines(['a', 'b'], ['a', 'a', 'b'])).toEqual(['wrong output: 1 unexpected line(s), e.g. "a"']);
    expect(diffSortedLines(['a', 'b'], ['b'])).toEqual(['wrong output: 1 expected line(s) missing, e.g. "a"']);
  });

  it('flags duplicate output files and a missing _SUCCESS', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'chaos-out-'));
    try {
      await writeFile(join(dir, 'part-00000'), 'a\n');
      await writeFile(join(dir, 'part-00001'), 'b\n');
      expect((await checkOutput(dir, ['a', 'b'], 1)).problems).toEqual([
        'no _SUCCESS file in the output directory',
        'duplicate or extra output files: part-00001 (sink parallelism 1)',
      ]);
      await writeFile(join(dir, '_SUCCESS'), '');
      expect((await checkOutput(dir, ['a', 'b'], 2)).problems).toEqual([]);
      await mkdir(join(dir, '.rebound-tmp'));
      expect((await checkOutput(dir, ['a', 'b'], 2)).problems).toEqual([
        'temporary sink files left in .rebound-tmp after the commit',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
