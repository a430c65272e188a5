import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import { wordsOf } from '@rebound/example-support';
import { REPO_ROOT } from './cluster.js';
import {
  JOB_MODULES,
  JOB_NAMES,
  checkOutput,
  countWords,
  drawJobParams,
  expectedLines,
  jobArgs,
  jobShape,
  wordcountFileText,
  type JobName,
} from './jobs.js';
import { diffSortedLines } from './line-diff.js';
import { Prng } from './prng.js';

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

  // The jobs run the examples' queries; the expectations come from the oracles (q1-oracle.ts,
  // join-oracle.ts), which share only the row generators with them.
  it.each(['aggregation', 'join'] satisfies JobName[])(
    'runs the %s job as drawn to exactly what its oracle computes',
    async (job) => {
      const p = { ...drawJobParams(new Prng(11), job), batchDelayMs: 0 };
      const built = await buildJob(await loadJobModule(join(REPO_ROOT, JOB_MODULES[job])), jobArgs(p, '', '/out'));
      // Faults are drawn over these vertices: a plan with more or fewer would misplace them.
      expect(built.graph.vertices).toHaveLength(jobShape(p).vertices);
      const out = await runLocally(built);
      const expected = expectedLines(p);
      expect(expected.length).toBeGreaterThan(job === 'aggregation' ? 3 : 1000);
      expect(diffSortedLines(expected, out.get('/out')!.sort())).toEqual([]);
    },
  );

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
