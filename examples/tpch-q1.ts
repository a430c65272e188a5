/**
 * A TPC-H Q1-style aggregation over generated lineitem rows:
 *   select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice),
 *          sum(l_extendedprice * (1 - l_discount)), sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)),
 *          avg(l_quantity), avg(l_extendedprice), avg(l_discount), count(*)
 *   from lineitem where l_shipdate <= date '1998-09-02' group by l_returnflag, l_linestatus
 *   --rows N          number of generated rows
 *   --output DIR      receives `flag|status|sum_qty|sum_base_price|sum_disc_price|sum_charge|avg_qty|avg_price|avg_disc|count`
 *   --seed S          generator seed (default 42)
 *   --split-size K    rows per source split (default 100000)
 *   --parallelism P   parallelism of the source (default: the number of splits)
 * Rows are a pure function of (seed, index) (@rebound/example-support), money is integer cents.
 */
import { defineJob } from '@rebound/api';
import { intOption, parseOptions, required, formatQ1, lineItem, mergeQ1, q1Acc, Q1_SHIP_DATE_CUTOFF } from '@rebound/example-support';

const USAGE = 'tpch-q1 --rows N --output DIR [--seed S] [--split-size K] [--parallelism P]';

export default defineJob('tpch-q1', (env, args) => {
  const o = parseOptions(args, USAGE, ['rows', 'output', 'seed', 'split-size', 'parallelism']);
  const rows = intOption(required(o.rows, 'rows', USAGE), 'rows', 0);
  const seed = intOption(o.seed, 'seed', 42);
  const splitSize = o['split-size'] === undefined ? undefined : intOption(o['split-size'], 'split-size', 1, 1);
  const parallelism = o.parallelism === undefined ? undefined : intOption(o.parallelism, 'parallelism', 1, 1);
  env
    .generateRows(rows, (i) => lineItem(seed, i), { splitSize, parallelism })
    .filter((item) => item.shipdate <= Q1_SHIP_DATE_CUTOFF)
    .map(q1Acc)
    .keyBy((acc) => `${acc[0]}|${acc[1]}`)
    .reduce(mergeQ1)
    .writeAsText(required(o.output, 'output', USAGE), formatQ1);
});
