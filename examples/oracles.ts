import { statSync, writeFileSync } from 'node:fs';
import { duckdbQuery, sqlString } from '@rebound/api/testing/duckdb';

/**
 * The SQL of the examples, run by DuckDB over the same files (or over the generated rows written
 * out as CSV): the expected output lines, shared by the unit tests (reference interpreter) and the
 * integration tests (a real cluster).
 */

/** A CSV file, or every file of a directory (as readCsv reads it). */
const csv = (path: string): string =>
  `read_csv(${sqlString(statSync(path).isDirectory() ? `${path}/*` : path)}, header = true, allow_quoted_nulls = false)`;

/** csv-groupby's lines (without header), sorted. */
export async function csvExpected(orders: string): Promise<string[]> {
  const rows = await duckdbQuery(
    `select o_orderpriority, count(*) orders, sum(o_totalprice) total_cents, avg(o_totalprice) avg_cents,
       min(o_orderdate)::VARCHAR first_order, max(o_orderdate)::VARCHAR last_order, count(o_comment) commented
     from ${csv(orders)} group by o_orderpriority`,
  );
  return rows
    .map((r) =>
      [r.o_orderpriority, r.orders, r.total_cents, r.avg_cents, r.first_order, r.last_order, r.commented]
        .map(String) // (no priority needs CSV quoting)
        .join(','),
    )
    .sort();
}

/** tpch-q3's lines (without header), in order. */
export async function q3Expected(dir: string, limit: number): Promise<string[]> {
  const rows = await duckdbQuery(
    `select l_orderkey, sum(l_extendedprice * (100 - l_discount))::BIGINT revenue, o_orderdate::VARCHAR o_orderdate, o_shippriority
     from ${csv(`${dir}/customer.csv`)} c, ${csv(`${dir}/orders.csv`)} o, ${csv(`${dir}/lineitem.csv`)} l
     where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
       and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
     group by l_orderkey, o_orderdate, o_shippriority
     order by revenue desc, o_orderdate limit ${limit}`,
  );
  return rows.map((r) => {
    const n = r.revenue as number;
    return `${r.l_orderkey},${Math.floor(n / 10000)}.${String(n % 10000).padStart(4, '0')},${r.o_orderdate},${r.o_shippriority}`;
  });
}

/** top-words' lines, in order: words as wordsOf finds them (ASCII input). */
export async function topWordsExpected(path: string, n: number): Promise<string[]> {
  const rows = await duckdbQuery(
    `select w, count(*) c from (select unnest(regexp_extract_all(lower(content), '[a-z0-9]+')) w from read_text(${sqlString(path)}))
     group by w order by c desc, w limit ${n}`,
  );
  return rows.map((r) => `${r.w}\t${r.c}`);
}

/** fn(0) .. fn(n - 1): the generated rows of a test, for writeRowsCsv. */
export const range = <T>(n: number, fn: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => fn(i));

/**
 * Generated rows (tpch-q1's line items, join's orders and customers) as a CSV file with a header,
 * so that DuckDB reads the very rows the job generates. Values are numbers or words without commas.
 */
export function writeRowsCsv(path: string, rows: Iterable<object>): string {
  const lines: string[] = [];
  for (const r of rows) {
    if (lines.length === 0) lines.push(Object.keys(r).join(','));
    lines.push(Object.values(r).join(','));
  }
  writeFileSync(path, lines.map((l) => `${l}\n`).join(''));
  return path;
}

/** Cents (a SQL expression) as a decimal string. */
const sqlMoney = (cents: string): string => `printf('%d.%02d', ${cents} // 100, ${cents} % 100)`;

/**
 * tpch-q1's lines, sorted. Per row the discounted price and the charge are rounded half up to
 * cents, in integers; an average is printed as the job documents it: the double to two decimals.
 */
export async function q1Expected(lineitem: string): Promise<string[]> {
  const rows = await duckdbQuery(
    `select returnflag, linestatus, sum(quantity) sum_qty,
       ${sqlMoney('sum(extendedprice)')} sum_base_price,
       ${sqlMoney('sum((extendedprice * (100 - discount) + 50) // 100)')} sum_disc_price,
       ${sqlMoney('sum((extendedprice * (100 - discount) * (100 + tax) + 5000) // 10000)')} sum_charge,
       avg(quantity) avg_qty, avg(extendedprice) / 100 avg_price, avg(discount) / 100 avg_disc, count(*) count_order
     from ${csv(lineitem)} where shipdate <= date '1998-12-01' - interval '90' day
     group by returnflag, linestatus`,
  );
  return rows
    .map((r) =>
      [
        r.returnflag,
        r.linestatus,
        r.sum_qty,
        r.sum_base_price,
        r.sum_disc_price,
        r.sum_charge,
        (r.avg_qty as number).toFixed(2),
        (r.avg_price as number).toFixed(2),
        (r.avg_disc as number).toFixed(2),
        r.count_order,
      ].join('|'),
    )
    .sort();
}

/** join's lines, sorted. */
export async function joinExpected(orders: string, customers: string): Promise<string[]> {
  const rows = await duckdbQuery(
    `select concat_ws(chr(9), o.orderkey, c.custkey, c.name, c.nation, ${sqlMoney('o.totalprice')}) line
     from ${csv(orders)} o join ${csv(customers)} c on o.custkey = c.custkey`,
  );
  return rows.map((r) => r.line as string).sort();
}
