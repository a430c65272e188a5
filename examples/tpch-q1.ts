/**
 * TPC-H Q1, the pricing summary report, over generated lineitem rows:
 *   select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
 *          sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
 *          avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
 *   from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day
 *   group by l_returnflag, l_linestatus
 *   --rows N          number of generated rows
 *   --output DIR      receives `flag|status|sum_qty|sum_base_price|sum_disc_price|sum_charge|avg_qty|avg_price|avg_disc|count`
 *   --seed S          generator seed (default 42)
 *   --split-size K    rows per source split (default 100000)
 *   --parallelism P   parallelism of the source (default: the number of splits)
 *   --record-delay-ms N  the reader waits N ms before each row (demos and failover tests)
 * Rows are a pure function of (seed, index) (`lineItem` in @rebound/example-support). Prices are
 * integer cents and discount and tax integer percents; the discounted price and the charge are
 * rounded to cents per row (TPC-H allows it), so every sum is an exact integer in any order.
 */
import { avg, count, defineJob, sum, type DataSet } from '@rebound/api';
import { intOption, lineItem, parseOptions, required, type LineItem } from '@rebound/example-support';

const USAGE = 'tpch-q1 --rows N --output DIR [--seed S] [--split-size K] [--parallelism P] [--record-delay-ms N]';

/** date '1998-12-01' - interval '90' day */
const SHIP_DATE_CUTOFF = '1998-09-02';

/** Cents to a decimal string. */
function money(cents: number | null): string {
  const c = Math.abs(cents ?? 0);
  return `${(cents ?? 0) < 0 ? '-' : ''}${Math.floor(c / 100)}.${String(c % 100).padStart(2, '0')}`;
}

/** An average (a double: the exact sum over the count), divided by `scale`, to two decimals. */
const fixed2 = (average: number | null, scale = 1): string => ((average ?? 0) / scale).toFixed(2);

/**
 * The query, from line items to report lines. A function of its input so that the chaos harness
 * runs this very query over a source of its own (scripts/chaos-jobs/aggregation.ts).
 */
export function q1(lineitems: DataSet<LineItem>): DataSet<string> {
  return (
    lineitems
      .filter((l) => l.shipdate <= SHIP_DATE_CUTOFF)
      // The per-row money the sums need, in cents.
      .map((l) => ({
        returnflag: l.returnflag,
        linestatus: l.linestatus,
        quantity: l.quantity,
        extendedprice: l.extendedprice,
        discount: l.discount,
        disc_price: Math.round((l.extendedprice * (100 - l.discount)) / 100),
        charge: Math.round((l.extendedprice * (100 - l.discount) * (100 + l.tax)) / 10_000),
      }))
      .groupBy(['returnflag', 'linestatus'])
      .aggregate({
        sum_qty: sum('quantity'),
        sum_base_price: sum('extendedprice'),
        sum_disc_price: sum('disc_price'),
        sum_charge: sum('charge'),
        avg_qty: avg('quantity'),
        avg_price: avg('extendedprice'),
        avg_disc: avg('discount'),
        count_order: count(),
      })
      .map((r) =>
        [
          r.returnflag,
          r.linestatus,
          String(r.sum_qty),
          money(r.sum_base_price),
          money(r.sum_disc_price),
          money(r.sum_charge),
          fixed2(r.avg_qty),
          fixed2(r.avg_price, 100), // cents to units
          fixed2(r.avg_disc, 100), // percents to a fraction
          String(r.count_order),
        ].join('|'),
      )
  );
}

export default defineJob('tpch-q1', (env, args) => {
  const o = parseOptions(args, USAGE, ['rows', 'output', 'seed', 'split-size', 'parallelism', 'record-delay-ms']);
  const rows = intOption(required(o.rows, 'rows', USAGE), 'rows', 0);
  const seed = intOption(o.seed, 'seed', 42);
  const splitSize = o['split-size'] === undefined ? undefined : intOption(o['split-size'], 'split-size', 1, 1);
  const parallelism = o.parallelism === undefined ? undefined : intOption(o.parallelism, 'parallelism', 1, 1);
  const recordDelayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 0);
  const lineitems = env.generateRows(rows, (i) => lineItem(seed, i), { splitSize, parallelism, recordDelayMs });
  q1(lineitems).writeAsText(required(o.output, 'output', USAGE));
});
