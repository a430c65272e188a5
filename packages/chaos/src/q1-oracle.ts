import { lineItem, type LineItem } from '@rebound/example-support';

/**
 * TPC-H Q1 over the generated lineitem rows, written from the query's definition and sharing no
 * code with the job (`q1` in examples/tpch-q1.ts, a groupBy().aggregate() over named fields, which
 * scripts/chaos-jobs/aggregation.ts runs): a bug there must not be in the expectation too. Only
 * the row generator `lineItem` is shared: it is the input, not the computation.
 *
 * Money is integer cents, per-row discounted price and charge are rounded half up to cents (the
 * convention the job documents, so sums are exact), and sums are BigInt so no total can round.
 *
 *   SELECT returnflag, linestatus, sum(quantity), sum(extendedprice),
 *          sum(extendedprice * (1 - discount)), sum(extendedprice * (1 - discount) * (1 + tax)),
 *          avg(quantity), avg(extendedprice), avg(discount), count(*)
 *   FROM lineitem WHERE shipdate <= date '1998-12-01' - interval '90' day
 *   GROUP BY returnflag, linestatus
 */
const SHIP_DATE_CUTOFF = '1998-09-02'; // 1998-12-01 minus 90 days

interface Group {
  qty: bigint;
  base: bigint;
  disc: bigint;
  charge: bigint;
  discountPercents: bigint;
  count: bigint;
}

/** a / b rounded half up, for a >= 0, b > 0. */
function roundHalfUp(a: bigint, b: bigint): bigint {
  return (2n * a + b) / (2n * b);
}

function cents(c: bigint): string {
  const sign = c < 0n ? '-' : '';
  const abs = c < 0n ? -c : c;
  return `${sign}${abs / 100n}.${String(abs % 100n).padStart(2, '0')}`;
}

function addRow(groups: Map<string, Group>, item: LineItem): void {
  const key = `${item.returnflag}|${item.linestatus}`;
  let g = groups.get(key);
  if (!g) groups.set(key, (g = { qty: 0n, base: 0n, disc: 0n, charge: 0n, discountPercents: 0n, count: 0n }));
  const price = BigInt(item.extendedprice);
  const keep = BigInt(100 - item.discount);
  g.qty += BigInt(item.quantity);
  g.base += price;
  g.disc += roundHalfUp(price * keep, 100n);
  g.charge += roundHalfUp(price * keep * BigInt(100 + item.tax), 10_000n);
  g.discountPercents += BigInt(item.discount);
  g.count += 1n;
}

/** The Q1 output lines for `rows` rows of seed `seed`, sorted: `flag|status|sum_qty|...|count`. */
export function expectedQ1Lines(rows: number, seed: number): string[] {
  const groups = new Map<string, Group>();
  for (let i = 0; i < rows; i++) {
    const item = lineItem(seed, i);
    if (item.shipdate <= SHIP_DATE_CUTOFF) addRow(groups, item);
  }
  const lines: string[] = [];
  for (const [key, g] of groups) {
    const n = Number(g.count);
    lines.push(
      [
        key,
        String(g.qty),
        cents(g.base),
        cents(g.disc),
        cents(g.charge),
        (Number(g.qty) / n).toFixed(2),
        (Number(g.base) / n / 100).toFixed(2),
        (Number(g.discountPercents) / n / 100).toFixed(2),
        String(g.count),
      ].join('|'),
    );
  }
  return lines.sort();
}
