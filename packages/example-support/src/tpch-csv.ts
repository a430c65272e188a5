import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isoDate, random32 } from './data.js';

/**
 * TPC-H-shaped tables as CSV files with headers, for the CSV examples and their DuckDB oracle
 * tests: customer.csv, orders.csv and lineitem.csv, a pure function of (scale, seed). Money is in
 * integer cents and discounts in integer percents, so every sum is exact in any order. Comments
 * hold commas, quotes and line breaks (RFC 4180 quoting); some are empty (null).
 *
 * Scale 1 has 1500 customers, 15 000 orders and about 60 000 line items (TPC-H's SF 0.01).
 */
export const MARKET_SEGMENTS = ['AUTOMOBILE', 'BUILDING', 'FURNITURE', 'HOUSEHOLD', 'MACHINERY'] as const;
export const ORDER_PRIORITIES = ['1-URGENT', '2-HIGH', '3-MEDIUM', '4-NOT SPECIFIED', '5-LOW'] as const;

/** TPC-H Q3's date: orders before it, items shipped after it. */
export const Q3_DATE = '1995-03-15';

export interface TpchCsvFiles {
  readonly customer: string;
  readonly orders: string;
  readonly lineitem: string;
}

const pick = <T>(xs: readonly T[], seed: number, i: number, salt: number): T =>
  xs[random32(seed, i, salt) % xs.length]!;
const between = (seed: number, i: number, salt: number, lo: number, hi: number): number =>
  lo + (random32(seed, i, salt) % (hi - lo + 1));

function comment(seed: number, i: number, salt: number): string {
  switch (random32(seed, i, salt) % 6) {
    case 0:
      return ''; // null
    case 1:
      return '"carefully, final"'; // a comma: quoted
    case 2:
      return '"says ""hello"""';
    case 3:
      return '"two\nlines"';
    default:
      return `note ${random32(seed, i, salt + 1) % 1000}`;
  }
}

/** Writes the three tables into `dir` (created if missing) and returns their paths. */
export function writeTpchCsv(dir: string, scale = 1, seed = 42): TpchCsvFiles {
  mkdirSync(dir, { recursive: true });
  const customers = Math.max(1, Math.round(1500 * scale));
  const orders = Math.max(1, Math.round(15000 * scale));
  const c = ['c_custkey,c_name,c_mktsegment,c_acctbal,c_comment'];
  for (let i = 1; i <= customers; i++) {
    const bal = between(seed, i, 1, -99999, 999999);
    c.push(
      `${i},Customer#${String(i).padStart(9, '0')},${pick(MARKET_SEGMENTS, seed, i, 2)},${bal},${comment(seed, i, 3)}`,
    );
  }
  const o = ['o_orderkey,o_custkey,o_orderstatus,o_totalprice,o_orderdate,o_orderpriority,o_shippriority,o_comment'];
  const l = ['l_orderkey,l_linenumber,l_quantity,l_extendedprice,l_discount,l_shipdate,l_returnflag'];
  for (let k = 1; k <= orders; k++) {
    const cust = between(seed, k, 10, 1, customers);
    const day = between(seed, k, 11, 0, 2405); // 1992-01-01 .. 1998-08-02
    const items = between(seed, k, 12, 1, 7);
    let total = 0;
    let open = 0;
    for (let n = 1; n <= items; n++) {
      const li = k * 8 + n;
      const qty = between(seed, li, 20, 1, 50);
      const price = (qty * between(seed, li, 21, 90_000, 110_000)) / 100;
      const extended = Math.round(price);
      const discount = between(seed, li, 22, 0, 10);
      const ship = isoDate(day + between(seed, li, 23, 1, 121));
      if (ship > '1995-06-17') open++;
      total += extended;
      l.push(`${k},${n},${qty},${extended},${discount},${ship},${pick(['R', 'A', 'N'], seed, li, 24)}`);
    }
    const status = open === items ? 'O' : open === 0 ? 'F' : 'P';
    o.push(
      `${k},${cust},${status},${total},${isoDate(day)},${pick(ORDER_PRIORITIES, seed, k, 13)},0,${comment(seed, k, 14)}`,
    );
  }
  const files = {
    customer: join(dir, 'customer.csv'),
    orders: join(dir, 'orders.csv'),
    lineitem: join(dir, 'lineitem.csv'),
  };
  writeFileSync(files.customer, c.join('\n') + '\n');
  writeFileSync(files.orders, o.join('\n') + '\n');
  writeFileSync(files.lineitem, l.join('\n') + '\n');
  return files;
}
