import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SplitEnumeratorContext } from '../source.js';
import { duckdbQuery, sqlString } from '../testing/duckdb.js';
import { csvField } from './csv-format.js';
import { CsvSource, type CsvSourceOptions, type CsvSplit } from './csv-source.js';

const root = mkdtempSync(join(tmpdir(), 'rebound-csv-'));
let fileNo = 0;
function writeTemp(content: string): string {
  const p = join(root, `f${fileNo++}.csv`);
  writeFileSync(p, content);
  return p;
}

/** Every split the enumerator hands out, read one after the other. */
async function readAll<T>(path: string, options: CsvSourceOptions): Promise<{ rows: T[]; splits: CsvSplit[] }> {
  const source = new CsvSource<T>(path, options);
  const splits: CsvSplit[] = [];
  let done = false;
  const ctx: SplitEnumeratorContext<CsvSplit> = {
    parallelism: 1,
    assignSplit: (s) => void splits.push(s),
    signalNoMoreSplits: () => void (done = true),
  };
  const e = await source.createEnumerator(ctx);
  // Round trip through the snapshot, as a new leader would restore it.
  const restored = source.restoreEnumerator(ctx, JSON.parse(JSON.stringify(e.snapshotState(-1))));
  while (!done) restored.handleSplitRequest(0);
  const rows: T[] = [];
  const reader = source.createReader();
  for (const s of splits) for await (const b of reader.read(JSON.parse(JSON.stringify(s)) as CsvSplit)) rows.push(...b);
  return { rows, splits };
}

const text = fc.string({ unit: fc.constantFrom('a', 'b', ',', '"', '\n', '\r\n', ' ', 'é', '€', 'x') });

describe('CsvSource', () => {
  it('reads RFC 4180 quoting with any split size: every record exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(text, fc.integer(), fc.option(text, { nil: null })), { maxLength: 30 }),
        fc.integer({ min: 1, max: 40 }),
        fc.boolean(),
        async (records, splitSizeBytes, crlf) => {
          const eol = crlf ? '\r\n' : '\n';
          const body = records
            .map(([s, n, o]) => [csvField(s), csvField(n), o === null ? '' : csvField(o)].join(','))
            .join(eol);
          const path = writeTemp(`s,n,o${eol}${body}${records.length > 0 ? eol : ''}`);
          const { rows } = await readAll(path, {
            header: true,
            splitSizeBytes,
            batchSize: 2,
            columns: { s: 'string', n: 'number', o: 'string?' },
          });
          expect(rows).toEqual(records.map(([s, n, o]) => ({ s, n, o })));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('moves split boundaries to record starts and counts lines across them', async () => {
    const path = writeTemp('id,note\n1,"one\nline two"\n2,plain\n3,"a ""q"" b"\n4,x\n');
    const { rows, splits } = await readAll(path, {
      header: true,
      splitSizeBytes: 5,
      columns: { id: 'number', note: 'string' },
    });
    expect(rows).toEqual([
      { id: 1, note: 'one\nline two' },
      { id: 2, note: 'plain' },
      { id: 3, note: 'a "q" b' },
      { id: 4, note: 'x' },
    ]);
    expect(splits.map((s) => s.line)).toEqual([2, 4, 5, 6]);
  });

  it('names file, line and column of a row that does not fit', async () => {
    const path = writeTemp('id,amount\n1,2\n2,"multi\nline"\n3,abc\n');
    await expect(readAll(path, { header: true, columns: { id: 'number', amount: 'number' } })).rejects.toThrow(
      `${path}, line 3, column 2 (amount): "multi\\nline" is not a number`,
    );
    const p2 = writeTemp('1,2\n3\n');
    await expect(readAll(p2, { columns: ['a', 'b'] })).rejects.toThrow(`${p2}, line 2, column 2: expected 2 fields`);
    const p3 = writeTemp('1,2\n3,4\n5,x"y\n');
    await expect(readAll(p3, { splitSizeBytes: 4, columns: ['a', 'b'] })).rejects.toThrow(
      `${p3}, line 3, column 2: a quote inside an unquoted field`,
    );
    const p4 = writeTemp('1,"open\n');
    await expect(readAll(p4, { columns: ['a', 'b'] })).rejects.toThrow('never closed');
    const p5 = writeTemp('1,\n');
    await expect(readAll(p5, { columns: { a: 'number', b: 'boolean' } })).rejects.toThrow(
      'line 1, column 2 (b): empty boolean in a column that is not nullable',
    );
  });

  it('types columns: numbers, booleans, nulls, and header names without columns', async () => {
    const path = writeTemp('a;b;c\n1.5;TRUE;\n-2e3;false;""\n');
    const { rows } = await readAll(path, {
      header: true,
      delimiter: ';',
      columns: [
        { name: 'a', type: 'number' },
        { name: 'b', type: 'boolean' },
        { name: 'c', nullable: true },
      ],
    });
    expect(rows).toEqual([
      { a: 1.5, b: true, c: null },
      { a: -2000, b: false, c: '' },
    ]);
    expect((await readAll(path, { header: true, delimiter: ';' })).rows).toEqual([
      { a: '1.5', b: 'TRUE', c: '' },
      { a: '-2e3', b: 'false', c: '' },
    ]);
    expect((await readAll(path, { delimiter: ';' })).rows[1]).toEqual(['1.5', 'TRUE', '']);
    expect((await readAll(writeTemp(''), { header: true })).rows).toEqual([]);
    expect((await readAll(writeTemp('x,y\n'), { header: true })).rows).toEqual([]);
  });

  it('agrees with DuckDB on quoting, nulls and line breaks', async () => {
    const lines = ['k,v,t'];
    for (let i = 0; i < 200; i++) {
      const v = i % 7 === 0 ? '' : String(i * 1.25);
      const t = i % 5 === 0 ? '' : csvField(`t ${i}${i % 3 === 0 ? ',\n"x"' : ''}`);
      lines.push(`${i % 13},${v},${t}`);
    }
    const path = writeTemp(lines.join('\n') + '\n');
    type Row = { k: number; v: number | null; t: string | null };
    const { rows } = await readAll<Row>(path, {
      header: true,
      splitSizeBytes: 97,
      columns: { k: 'number', v: 'number?', t: 'string?' },
    });
    const oracle = await duckdbQuery(
      `select k, v, t from read_csv(${sqlString(path)}, header = true, allow_quoted_nulls = false,
        columns = {'k': 'INTEGER', 'v': 'DOUBLE', 't': 'VARCHAR'}) order by k, v nulls first, t nulls first`,
    );
    const byOrder = (a: Row, b: Row): number =>
      a.k - b.k || (a.v ?? -Infinity) - (b.v ?? -Infinity) || String(a.t ?? '').localeCompare(String(b.t ?? ''));
    expect([...rows].sort(byOrder)).toEqual([...(oracle as Row[])].sort(byOrder));
  });
});
