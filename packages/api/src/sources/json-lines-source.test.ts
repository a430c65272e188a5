import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SourceSplit, SplitEnumeratorContext } from '../source.js';
import type { Source } from '../source.js';
import { duckdbQuery, sqlString } from '../testing/duckdb.js';
import { collectionSource } from './collection-source.js';
import { JsonLinesSource } from './json-lines-source.js';
import { seededRandom as rng } from '../testing/seeded-random.js';

const root = mkdtempSync(join(tmpdir(), 'rebound-jsonl-'));

/**
 * A JSON string literal written by hand, not by JSON.stringify: each character raw where JSON
 * allows it, or as a short escape, or as \uXXXX (astral characters as a surrogate pair).
 */
function jsonString(text: string, r: () => number): string {
  const SHORT: Record<string, string> = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\t': '\\t', '\r': '\\r' };
  let out = '"';
  for (const ch of text) {
    const mustEscape = ch in SHORT || ch < ' ';
    const pick = r();
    if (!mustEscape && pick < 0.6) out += ch;
    else if (ch in SHORT && pick < 0.8) out += SHORT[ch];
    else for (let k = 0; k < ch.length; k++) out += `\\u${ch.charCodeAt(k).toString(16).padStart(4, '0')}`;
  }
  return out + '"';
}

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

  it('reads what DuckDB read_json reads from the same file: escapes, spacing, CRLF, nulls, blank lines', async () => {
    const r = rng(26);
    const chars = ['a', 'Z', ' ', '"', '\\', '\n', '\t', 'é', '€', '😀', '漢', ',', '{', '}', '\u0001'];
    const lines: string[] = [];
    for (let i = 0; i < 400; i++) {
      const text = Array.from({ length: Math.floor(r() * 12) }, () => chars[Math.floor(r() * chars.length)]!).join('');
      const n = r() < 0.15 ? 'null' : (['-0.5', '1e3', '2.25E-2', '17', '0'] as const)[Math.floor(r() * 5)]!;
      const sp = r() < 0.5 ? ' ' : '';
      const fields = [`"i":${sp}${i}`, `"s":${sp}${jsonString(text, r)}`, `"n":${sp}${n}`, `"b":${sp}${r() < 0.5}`];
      if (r() < 0.3) fields.reverse();
      lines.push(`${sp}{${fields.join(`,${sp}`)}}${sp}` + (r() < 0.2 ? '\r' : ''));
      if (r() < 0.05) lines.push('');
    }
    const path = join(root, 'duckdb.jsonl');
    writeFileSync(path, lines.join('\n') + '\n');
    const ours = await readAll(new JsonLinesSource<{ i: number }>(path, { splitSizeBytes: 512 }));
    const theirs = await duckdbQuery(
      `select i, s, n, b from read_json(${sqlString(path)}, format = 'newline_delimited',
        columns = {'i': 'BIGINT', 's': 'VARCHAR', 'n': 'DOUBLE', 'b': 'BOOLEAN'}) order by i`,
    );
    expect(theirs).toHaveLength(400);
    expect(ours.sort((a, b) => a.i - b.i)).toEqual(theirs);
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
