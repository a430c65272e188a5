/**
 * "Count my CSV by a column": orders per priority, from a CSV file with a header.
 *   select o_orderpriority, count(*) orders, sum(o_totalprice) total_cents, avg(o_totalprice) avg_cents,
 *          min(o_orderdate) first_order, max(o_orderdate) last_order, count(o_comment) commented
 *   from orders group by o_orderpriority
 *   --input PATH      orders.csv (see writeTpchCsv in @rebound/example-support), or a directory of them
 *   --output DIR      receives CSV files with a header
 *   --split-size B    bytes per source split (default 8 mb)
 *   --record-delay-ms N  slows the reader down for demos: N ms per row
 */
import { avg, count, defineJob, max, min, sum } from '@rebound/api';
import { intOption, parseOptions, required } from '@rebound/example-support';

const USAGE = 'csv-groupby --input PATH --output DIR [--split-size B] [--record-delay-ms N]';

/** The columns of orders.csv: typed, `?` for a column that may be empty (null). */
const ORDERS = {
  o_orderkey: 'number',
  o_custkey: 'number',
  o_orderstatus: 'string',
  o_totalprice: 'number',
  o_orderdate: 'string',
  o_orderpriority: 'string',
  o_shippriority: 'number',
  o_comment: 'string?',
} as const;

interface Order {
  o_orderkey: number;
  o_custkey: number;
  o_orderstatus: string;
  o_totalprice: number;
  o_orderdate: string;
  o_orderpriority: string;
  o_shippriority: number;
  o_comment: string | null;
}

export default defineJob('csv-groupby', (env, args) => {
  const o = parseOptions(args, USAGE, ['input', 'output', 'split-size', 'record-delay-ms']);
  const splitSizeBytes = o['split-size'] === undefined ? undefined : intOption(o['split-size'], 'split-size', 1, 1);
  env
    .readCsv<Order>(required(o.input, 'input', USAGE), {
      header: true,
      columns: ORDERS,
      splitSizeBytes,
      recordDelayMs: intOption(o['record-delay-ms'], 'record-delay-ms', 0),
    })
    .groupBy('o_orderpriority')
    .aggregate({
      orders: count(),
      total_cents: sum('o_totalprice'),
      avg_cents: avg('o_totalprice'),
      first_order: min('o_orderdate'),
      last_order: max('o_orderdate'),
      commented: count('o_comment'),
    })
    .writeAsCsv(required(o.output, 'output', USAGE), {
      columns: ['o_orderpriority', 'orders', 'total_cents', 'avg_cents', 'first_order', 'last_order', 'commented'],
    });
});
