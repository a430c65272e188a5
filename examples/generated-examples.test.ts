import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import { customer, lineItem, order } from '@rebound/example-support';
import { joinExpected, q1Expected, range, writeRowsCsv } from './oracles.js';

const examples = import.meta.dirname;

async function run(example: string, args: string[]): Promise<string[]> {
  const built = await buildJob(await loadJobModule(join(examples, example)), args);
  const out = await runLocally(built);
  expect([...out.keys()]).toEqual(['/out']);
  return out.get('/out')!.sort();
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'rebound-generated-examples-'));
});

/** tpch-q1 and join generate their rows; DuckDB gets the same rows as CSV and runs the SQL. */
describe('generated-data examples against DuckDB (on the reference interpreter)', () => {
  it('tpch-q1', async () => {
    const [rows, seed] = [8000, 13];
    const lineitem = writeRowsCsv(
      join(dir, 'lineitem.csv'),
      range(rows, (i) => lineItem(seed, i)),
    );
    const expected = await q1Expected(lineitem);
    expect(expected.map((l) => l.slice(0, 3))).toEqual(['A|F', 'N|F', 'N|O', 'R|F']);
    const args = ['--rows', String(rows), '--seed', String(seed), '--split-size', '900', '--output', '/out'];
    expect(await run('tpch-q1.ts', args)).toEqual(expected);
  });

  it('join', async () => {
    const [orders, customers, seed] = [3000, 200, 21];
    const orderCsv = writeRowsCsv(
      join(dir, 'orders.csv'),
      range(orders, (i) => order(seed, i, customers)),
    );
    const customerCsv = writeRowsCsv(
      join(dir, 'customers.csv'),
      range(customers, (i) => customer(seed, i)),
    );
    const expected = await joinExpected(orderCsv, customerCsv);
    // About one order in eleven has no customer: dropped, not all or none.
    expect(expected.length).toBeGreaterThan(orders * 0.85);
    expect(expected.length).toBeLessThan(orders * 0.97);
    const args = ['--orders', String(orders), '--customers', String(customers), '--seed', String(seed)];
    expect(await run('join.ts', [...args, '--split-size', '700', '--output', '/out'])).toEqual(expected);
  });
});
