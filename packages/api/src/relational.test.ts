import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { avg, buildJob, count, defineJob, max, min, sum, type DataSet, type ExecutionEnvironment } from './index.js';
import { csvField } from './sources/csv-format.js';
import { duckdbQuery, sqlString } from './testing/duckdb.js';
import { runLocally } from './testing/run-locally.js';
import { seededRandom as rng } from './testing/seeded-random.js';

const dir = mkdtempSync(join(tmpdir(), 'rebound-relational-'));
const ORDERS = join(dir, 'orders.csv');
const CUSTOMERS = join(dir, 'customers.csv');
const EMPTY = join(dir, 'empty.csv');

type Order = { id: number; cust: number; amount: number | null; price: number; tag: string | null };
type Customer = { cust: number; name: string };
const ORDER_COLUMNS = { id: 'number', cust: 'number', amount: 'number?', price: 'number', tag: 'string?' } as const;
const SQL_ORDERS = `read_csv(${sqlString(ORDERS)}, header = true, allow_quoted_nulls = false,
  columns = {'id': 'BIGINT', 'cust': 'BIGINT', 'amount': 'DOUBLE', 'price': 'DOUBLE', 'tag': 'VARCHAR'})`;
const SQL_CUSTOMERS = `read_csv(${sqlString(CUSTOMERS)}, header = true, columns = {'cust': 'BIGINT', 'name': 'VARCHAR'})`;

beforeAll(() => {
  const r = rng(26);
  const lines = ['id,cust,amount,price,tag'];
  for (let id = 0; id < 3000; id++) {
    // One huge key: a third of all orders belong to customer 0.
    const cust = r() < 0.33 ? 0 : 1 + Math.floor(r() * 60);
    const amount = r() < 0.1 ? null : Math.floor(r() * 10_000) / 100;
    const price = Math.floor(r() * 1000) / 4;
    const tags = [null, 'plain', 'with,comma', 'with "quote"', 'two\nlines', ''];
    const tag = tags[Math.floor(r() * tags.length)]!;
    lines.push([id, cust, amount === null ? '' : amount, price, tag === null ? '' : csvField(tag)].join(','));
  }
  writeFileSync(ORDERS, lines.join('\n') + '\n');
  // Customers 0..69: 61..69 have no orders; orders of customers over 50 have no customer.
  const cs = ['cust,name'];
  for (let c = 0; c < 70; c++) if (c <= 50 || c > 60) cs.push(`${c},${csvField(`name ${c}, "${c}"`)}`);
  writeFileSync(CUSTOMERS, cs.join('\n') + '\n');
  writeFileSync(EMPTY, 'id,cust,amount,price,tag\n');
});

/** Runs a job on the reference interpreter; its one sink writes JSON lines. */
async function rows<T>(build: (env: ExecutionEnvironment) => DataSet<T>): Promise<unknown[]> {
  const built = await buildJob(
    defineJob('t', (env) => {
      build(env).writeAsJsonLines('/out');
    }),
    [],
    { estimateSplits: false },
  );
  return (await runLocally(built)).get('/out')!.map((l) => JSON.parse(l) as unknown);
}

const orders = (env: ExecutionEnvironment, path = ORDERS): DataSet<Order> =>
  env.readCsv<Order>(path, { header: true, columns: ORDER_COLUMNS, splitSizeBytes: 4096 });
const customers = (env: ExecutionEnvironment): DataSet<Customer> =>
  env.readCsv<Customer>(CUSTOMERS, { header: true, columns: { cust: 'number', name: 'string' } });

/** Row-for-row equality after sorting both sides by their JSON, numbers to 9 significant digits. */
function expectSameRows(actual: unknown[], expected: unknown[]): void {
  const canon = (r: unknown): string =>
    JSON.stringify(r, (_k, v: unknown) => (typeof v === 'number' ? Number(v.toPrecision(9)) : v));
  expect(actual.map(canon).sort()).toEqual(expected.map(canon).sort());
}

describe('groupBy().aggregate()', () => {
  it('matches SQL GROUP BY: sum, count, avg, min, max with nulls and one huge key', async () => {
    const out = await rows((env) =>
      orders(env)
        .groupBy('cust')
        .aggregate({
          total: sum('amount'),
          n: count(),
          na: count('amount'),
          mean: avg('price'),
          lo: min('price'),
          hi: max('tag'),
          nullSum: sum('missing'),
        }),
    );
    const oracle = await duckdbQuery(
      `select cust, sum(amount) total, count(*) n, count(amount) na, avg(price) mean, min(price) lo,
         max(tag) hi, null nullSum from ${SQL_ORDERS} group by cust`,
    );
    expect(out.length).toBe(61);
    expectSameRows(out, oracle);
  });

  it('groups by several fields and by a key function; an empty input has no groups', async () => {
    const out = await rows((env) =>
      orders(env)
        .groupBy(['cust', 'tag'])
        .aggregate({ n: count(), hi: max('amount') }),
    );
    expectSameRows(
      out,
      await duckdbQuery(`select cust, tag, count(*) n, max(amount) hi from ${SQL_ORDERS} group by cust, tag`),
    );
    const byFn = await rows((env) =>
      orders(env)
        .groupBy((o) => o.id % 3)
        .aggregate({ n: count() }),
    );
    expectSameRows(byFn, await duckdbQuery(`select id % 3 as key, count(*) n from ${SQL_ORDERS} group by key`));
    expect(await rows((env) => orders(env, EMPTY).groupBy('cust').aggregate({ n: count() }))).toEqual([]);
  });
});

describe('outer joins', () => {
  const sql = (kind: string): Promise<{ [c: string]: unknown }[]> =>
    duckdbQuery(`select o.id, c.cust, c.name from ${SQL_ORDERS} o ${kind} join ${SQL_CUSTOMERS} c on o.cust = c.cust`);
  const joined = (l: Order | null, r: Customer | null) => ({
    id: l?.id ?? null,
    cust: r?.cust ?? null,
    name: r?.name ?? null,
  });

  it('inner, left, right and full outer joins match SQL', async () => {
    const inner = await rows((env) =>
      orders(env)
        .join(customers(env))
        .where((o) => o.cust)
        .equalTo((c) => c.cust)
        .with(joined),
    );
    expectSameRows(inner, await sql('inner'));
    const left = await rows((env) =>
      orders(env)
        .leftOuterJoin(customers(env))
        .where((o) => o.cust)
        .equalTo((c) => c.cust)
        .with(joined),
    );
    expectSameRows(left, await sql('left'));
    const right = await rows((env) =>
      orders(env)
        .rightOuterJoin(customers(env))
        .where((o) => o.cust)
        .equalTo((c) => c.cust)
        .with(joined),
    );
    expectSameRows(right, await sql('right'));
    const full = await rows((env) =>
      orders(env)
        .fullOuterJoin(customers(env))
        .where((o) => o.cust)
        .equalTo((c) => c.cust)
        .with(joined),
    );
    expectSameRows(full, await sql('full'));
    expect(full.length).toBeGreaterThan(inner.length);
  });

  it('an empty side gives no pairs but keeps the other side in an outer join', async () => {
    const out = await rows((env) =>
      customers(env)
        .leftOuterJoin(orders(env, EMPTY))
        .where((c) => c.cust)
        .equalTo((o) => o.cust)
        .with((c, o) => [c.cust, o]),
    );
    expect(out.length).toBe(60);
    expect(out.every((r) => (r as unknown[])[1] === null)).toBe(true);
  });
});

describe('union, distinct, mapPartition, fromElements', () => {
  it('union keeps every record; distinct matches SQL DISTINCT', async () => {
    const both = (env: ExecutionEnvironment) =>
      orders(env)
        .map((o) => o.cust)
        .union(customers(env).map((c) => c.cust));
    expectSameRows(
      await rows(both),
      await duckdbQuery(`select cust from ${SQL_ORDERS} union all select cust from ${SQL_CUSTOMERS}`).then((r) =>
        r.map((x) => x.cust),
      ),
    );
    expectSameRows(
      await rows((env) => both(env).distinct()),
      await duckdbQuery(`select cust from ${SQL_ORDERS} union select cust from ${SQL_CUSTOMERS}`).then((r) =>
        r.map((x) => x.cust),
      ),
    );
    // distinct(key) keeps the first record of each key.
    const firstOfTag = await rows((env) =>
      orders(env)
        .distinct((o) => o.tag)
        .map((o) => [o.tag, o.id]),
    );
    expectSameRows(
      firstOfTag,
      await duckdbQuery(`select tag, min(id) id from ${SQL_ORDERS} group by tag`).then((r) =>
        r.map((x) => [x.tag, x.id]),
      ),
    );
  });

  it('mapPartition sees all records of its subtask at once; fromElements ships small inputs', async () => {
    expect(
      await rows((env) => orders(env).mapPartition((all) => [all.length, all.reduce((s, o) => s + o.price, 0)])),
    ).toEqual([3000, (await duckdbQuery(`select sum(price) s from ${SQL_ORDERS}`))[0]!.s]);
    expect(
      await rows((env) =>
        env
          .fromElements('a', 'b', 'a')
          .union(env.fromCollection(['c']))
          .distinct(),
      ),
    ).toEqual(['a', 'b', 'c']);
  });
});

describe('sortBy().first(n) and topN', () => {
  it('matches ORDER BY ... LIMIT, nulls last, ties broken by a second key', async () => {
    const top = await rows((env) =>
      orders(env)
        .sortBy((o) => [o.amount, o.id], ['desc', 'asc'])
        .first(25)
        .map((o) => [o.id, o.amount]),
    );
    const oracle = await duckdbQuery(
      `select id, amount from ${SQL_ORDERS} order by amount desc nulls last, id limit 25`,
    );
    expect(top).toEqual(oracle.map((r) => [r.id, r.amount]));
    const lowest = await rows((env) =>
      orders(env)
        .sortBy((o) => o.amount)
        .first(400)
        .map((o) => o.amount),
    );
    expect(lowest).toEqual(
      (await duckdbQuery(`select amount from ${SQL_ORDERS} order by amount nulls last limit 400`)).map((r) => r.amount),
    );
    const words = await rows((env) =>
      orders(env)
        .topN(3, (o) => o.price)
        .map((o) => o.price),
    );
    expect(words).toEqual(
      (await duckdbQuery(`select price from ${SQL_ORDERS} order by price desc limit 3`)).map((r) => r.price),
    );
    expect(await rows((env) => orders(env, EMPTY).topN(3, (o) => o.id))).toEqual([]);
  });
});

describe('writeAsCsv', () => {
  it('quotes what needs it, writes null as an empty field, and reads back the same in DuckDB', async () => {
    const built = await buildJob(
      defineJob('csv', (env) => {
        orders(env).writeAsCsv('/out', { columns: ['id', 'amount', 'tag'] });
      }),
      [],
      { estimateSplits: false },
    );
    const lines = (await runLocally(built)).get('/out')!;
    expect(lines[0]).toBe('id,amount,tag');
    const file = join(dir, 'written.csv');
    writeFileSync(file, lines.join('\n') + '\n');
    const back = await duckdbQuery(
      `select id, amount, tag from read_csv(${sqlString(file)}, header = true, allow_quoted_nulls = false,
        columns = {'id': 'BIGINT', 'amount': 'DOUBLE', 'tag': 'VARCHAR'})`,
    );
    expectSameRows(back, await duckdbQuery(`select id, amount, tag from ${SQL_ORDERS}`));
  });
});

describe('writeAsJsonLines', () => {
  it('writes one JSON object per record, which DuckDB reads back as the rows it read itself', async () => {
    const built = await buildJob(
      defineJob('jsonl', (env) => {
        orders(env).writeAsJsonLines('/out');
      }),
      [],
      { estimateSplits: false },
    );
    const lines = (await runLocally(built)).get('/out')!;
    expect(lines).toHaveLength(3000);
    const file = join(dir, 'written.jsonl');
    writeFileSync(file, lines.join('\n') + '\n');
    const back = await duckdbQuery(
      `select id, cust, amount, price, tag from read_json(${sqlString(file)}, format = 'newline_delimited',
        columns = {'id': 'BIGINT', 'cust': 'BIGINT', 'amount': 'DOUBLE', 'price': 'DOUBLE', 'tag': 'VARCHAR'})`,
    );
    expectSameRows(back, await duckdbQuery(`select id, cust, amount, price, tag from ${SQL_ORDERS}`));
  });
});

describe('readJsonLines', () => {
  it('reads the rows of a file that DuckDB wrote as JSON lines', async () => {
    const file = join(dir, 'duckdb-written.jsonl');
    await duckdbQuery(
      `copy (select id, cust, amount, price, tag from ${SQL_ORDERS}) to ${sqlString(file)} (format json)`,
    );
    const read = await rows((env) => env.readJsonLines<Order>(file, { splitSizeBytes: 4096 }));
    expect(read).toHaveLength(3000);
    expectSameRows(read, await duckdbQuery(`select id, cust, amount, price, tag from ${SQL_ORDERS}`));
  });
});
