import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildJob, loadJobModule } from '@rebound/api';
import { runLocally } from '@rebound/api/testing';
import {
  charge,
  customer,
  discountedPrice,
  formatJoined,
  formatQ1,
  lineItem,
  order,
  type Q1Acc,
} from '@rebound/example-support';

const examples = import.meta.dirname;

async function run(example: string, args: string[]): Promise<string[]> {
  const built = await buildJob(await loadJobModule(join(examples, example)), args);
  const out = await runLocally(built);
  expect([...out.keys()]).toEqual(['/out']);
  return out.get('/out')!.sort();
}

describe('examples (on the reference interpreter)', () => {
  it('wordcount counts lower-cased runs of letters and digits', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-wc-'));
    writeFileSync(join(dir, 'a.txt'), 'Hello, hello WORLD!\nÜber 42 über-alles\n');
    writeFileSync(join(dir, 'b.txt'), '日本語 テキスト 42\n\n');
    writeFileSync(join(dir, '_ignored'), 'hello\n');
    expect(await run('wordcount.ts', ['--input', dir, '--output', '/out'])).toEqual(
      ['42\t2', 'alles\t1', 'hello\t2', 'world\t1', 'テキスト\t1', 'über\t2', '日本語\t1'].sort(),
    );
  });

  it('unique-ids numbers every line once with ids from its coordinator', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rebound-ids-'));
    writeFileSync(join(dir, 'a.txt'), 'alpha\nbeta\n\ngamma\n');
    const out = await run('unique-ids.ts', ['--input', dir, '--output', '/out', '--block-size', '3']);
    expect(out).toEqual(['0\talpha', '1\tbeta', '2\t', '3\tgamma'].sort());
  });

  it('wordcount reports bad arguments as a build failure', async () => {
    const def = await loadJobModule(join(examples, 'wordcount.ts'));
    await expect(buildJob(def, ['--input', 'x'])).rejects.toThrow(
      /job 'wordcount' failed to build: missing --output; usage: wordcount/,
    );
    await expect(buildJob(def, ['--bogus'])).rejects.toThrow(/Unknown option '--bogus'/);
  });

  it('tpch-q1 matches an independent computation', async () => {
    const rows = 5000;
    const seed = 3;
    const groups = new Map<string, Q1Acc>();
    for (let i = 0; i < rows; i++) {
      const r = lineItem(seed, i);
      if (r.shipdate > '1998-09-02') continue;
      const k = r.returnflag + r.linestatus;
      const g = groups.get(k) ?? [r.returnflag, r.linestatus, 0, 0, 0, 0, 0, 0];
      g[2] += r.quantity;
      g[3] += r.extendedprice;
      g[4] += discountedPrice(r);
      g[5] += charge(r);
      g[6] += r.discount;
      g[7] += 1;
      groups.set(k, g);
    }
    expect([...groups.keys()].sort()).toEqual(['AF', 'NF', 'NO', 'RF']);
    const expected = [...groups.values()].map(formatQ1).sort();
    const got = await run('tpch-q1.ts', [
      '--rows',
      String(rows),
      '--seed',
      String(seed),
      '--split-size',
      '700',
      '--output',
      '/out',
    ]);
    expect(got).toEqual(expected);
    expect(got[0]).toMatch(/^A\|F\|\d+\|\d+\.\d\d\|\d+\.\d\d\|\d+\.\d\d\|\d+\.\d\d\|\d+\.\d\d\|0\.\d\d\|\d+$/);
  });

  it('join matches an independent nested-loop join', async () => {
    const [orders, customers, seed] = [700, 50, 9];
    const expected: string[] = [];
    for (let i = 0; i < orders; i++) {
      const o = order(seed, i, customers);
      for (let c = 0; c < customers; c++)
        if (customer(seed, c).custkey === o.custkey) expected.push(formatJoined(o, customer(seed, c)));
    }
    expect(expected.length).toBeGreaterThan(orders * 0.8);
    expect(expected.length).toBeLessThan(orders);
    const got = await run('join.ts', [
      '--orders',
      String(orders),
      '--customers',
      String(customers),
      '--seed',
      String(seed),
      '--output',
      '/out',
    ]);
    expect(got).toEqual(expected.sort());
  });
});
