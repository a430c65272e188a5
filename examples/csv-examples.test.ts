import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import { writeTpchCsv, type TpchCsvFiles } from '@rebound/example-support';
import { csvExpected, q3Expected, topWordsExpected } from './oracles.js';

const examples = import.meta.dirname;

async function run(example: string, args: string[]): Promise<string[]> {
  const built = await buildJob(await loadJobModule(join(examples, example)), args);
  const out = await runLocally(built);
  expect([...out.keys()]).toEqual(['/out']);
  return out.get('/out')!;
}

let dir: string;
let files: TpchCsvFiles;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rebound-csv-examples-'));
  files = writeTpchCsv(dir, 0.2, 7);
});

describe('CSV examples against DuckDB (on the reference interpreter)', () => {
  it('csv-groupby', async () => {
    const out = await run('csv-groupby.ts', ['--input', files.orders, '--output', '/out', '--split-size', '20000']);
    expect(out[0]).toBe('o_orderpriority,orders,total_cents,avg_cents,first_order,last_order,commented');
    expect(out.slice(1).sort()).toEqual(await csvExpected(files.orders));
  });

  it('tpch-q3', async () => {
    const out = await run('tpch-q3.ts', ['--input', dir, '--output', '/out', '--split-size', '50000']);
    expect(out).toEqual(['l_orderkey,revenue,o_orderdate,o_shippriority', ...(await q3Expected(dir, 10))]);
  });

  it('top-words', async () => {
    const text = join(dir, 'words.txt');
    const vocab = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta', 'eta', 'theta', 'iota', 'kappa', 'lambda', 'mu'];
    const lines: string[] = [];
    for (let i = 0; i < 2000; i++) lines.push(`${vocab[(i * 7) % 12]} ${vocab[(i * i) % 12]}, ${vocab[i % 5]}!`);
    writeFileSync(text, lines.join('\n') + '\n');
    const out = await run('top-words.ts', ['--input', text, '--output', '/out', '--n', '5']);
    expect(out).toEqual(await topWordsExpected(text, 5));
    expect(out.length).toBe(5);
  });

  it('a CSV row that does not fit fails the job with file, line and column', async () => {
    const bad = join(dir, 'bad.csv');
    writeFileSync(
      bad,
      'o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_orderdate,o_orderpriority,o_shippriority,o_comment\n1,2,O,x,1995-01-01,1-URGENT,0,\n',
    );
    await expect(run('csv-groupby.ts', ['--input', bad, '--output', '/out'])).rejects.toThrow(
      `${bad}, line 2, column 4 (o_totalprice): "x" is not a number`,
    );
  });
});
