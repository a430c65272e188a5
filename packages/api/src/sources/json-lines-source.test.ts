import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceSplit, SplitEnumeratorContext } from '../source.js';
import type { Source } from '../source.js';
import { collectionSource } from './collection-source.js';
import { JsonLinesSource } from './json-lines-source.js';

const root = mkdtempSync(join(tmpdir(), 'rebound-jsonl-'));

async function readAll<T>(source: Source<T, SourceSplit, unknown>): Promise<T[]> {
  const splits: SourceSplit[] = [];
  let done = false;
  const ctx: SplitEnumeratorContext<SourceSplit> = {
    parallelism: 2,
    assignSplit: (s) => void splits.push(s),
    signalNoMoreSplits: () => void (done = true),
  };
  const e = await source.createEnumerator(ctx);
  const restored = await source.restoreEnumerator(ctx, JSON.parse(JSON.stringify(await e.snapshotState(-1))));
  for (let subtask = 0; !done; subtask = 1 - subtask) restored.handleSplitRequest(subtask);
  const out: T[] = [];
  const reader = source.createReader({ subtask: 0, parallelism: 1, attempt: 0 });
  for (const s of splits) for await (const b of reader.read(s)) out.push(...b);
  return out;
}

describe('JsonLinesSource', () => {
  it('reads one value per line across byte-range splits, skipping blank lines', async () => {
    const values = Array.from({ length: 50 }, (_, i) => ({ i, s: `v\n${i}`, n: i % 4 === 0 ? null : i / 2 }));
    const path = join(root, 'a.jsonl');
    writeFileSync(path, values.map((v) => JSON.stringify(v)).join('\n') + '\n\n');
    expect(await readAll(new JsonLinesSource(path, { splitSizeBytes: 37 }))).toEqual(values);
  });

  it('names file and line of a line that is not JSON', async () => {
    const path = join(root, 'bad.jsonl');
    writeFileSync(path, '{"a":1}\n{"a":2}\n{"a":3}\n{oops}\n{"a":5}\n');
    await expect(readAll(new JsonLinesSource(path, { splitSizeBytes: 10 }))).rejects.toThrow(
      `${path}, line 4: not JSON`,
    );
  });
});

describe('collectionSource', () => {
  it('hands out the elements once each, in index ranges, unaffected by later changes', async () => {
    const elements = Array.from({ length: 25 }, (_, i) => [i, `e${i}`]);
    const source = collectionSource(elements, { splitSize: 4 });
    elements.push([99, 'late']);
    expect(await readAll(source)).toEqual(elements.slice(0, 25));
    expect(await readAll(collectionSource([]))).toEqual([]);
  });
});
