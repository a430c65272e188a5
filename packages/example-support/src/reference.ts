import type { Customer, LineItem, Order } from './data.js';

/**
 * Reference computations over the generated rows, for the tests and the chaos harness: Q1 as a
 * fold of positional accumulators and the examples' output lines. The examples do not use them
 * (examples/tpch-q1.ts and examples/join.ts spell their query over named fields), so a test that
 * compares an example with these checks it against a second, independent formulation.
 */

/** Per-row money of Q1, rounded to cents per row (TPC-H allows it; keeps sums exact integers). */
export function discountedPrice(item: LineItem): number {
  return Math.round((item.extendedprice * (100 - item.discount)) / 100);
}
export function charge(item: LineItem): number {
  return Math.round((item.extendedprice * (100 - item.discount) * (100 + item.tax)) / 10_000);
}

/** Q1's per-group accumulator: [returnflag, linestatus, qty, base, discPrice, charge, discountPercents, count]. */
export type Q1Acc = [string, string, number, number, number, number, number, number];

export function q1Acc(item: LineItem): Q1Acc {
  return [
    item.returnflag,
    item.linestatus,
    item.quantity,
    item.extendedprice,
    discountedPrice(item),
    charge(item),
    item.discount,
    1,
  ];
}

export function mergeQ1(a: Q1Acc, b: Q1Acc): Q1Acc {
  return [a[0], a[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5], a[6] + b[6], a[7] + b[7]];
}

function money(cents: number): string {
  const sign = cents < 0 ? '-' : '';
  const c = Math.abs(cents);
  return `${sign}${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

/**
 * One output line of Q1:
 * `returnflag|linestatus|sum_qty|sum_base_price|sum_disc_price|sum_charge|avg_qty|avg_price|avg_disc|count_order`.
 */
export function formatQ1(acc: Q1Acc): string {
  const [flag, status, qty, base, disc, chg, discPct, count] = acc;
  return [
    flag,
    status,
    String(qty),
    money(base),
    money(disc),
    money(chg),
    (qty / count).toFixed(2),
    (base / count / 100).toFixed(2),
    (discPct / count / 100).toFixed(2),
    String(count),
  ].join('|');
}

/** One output line of the join example. */
export function formatJoined(o: Order, c: Customer): string {
  return `${o.orderkey}\t${c.custkey}\t${c.name}\t${c.nation}\t${money(o.totalprice)}`;
}
