/**
 * TPC-H Q3, the shipping priority query, over CSV tables:
 *   select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
 *   from customer, orders, lineitem
 *   where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
 *   group by l_orderkey, o_orderdate, o_shippriority
 *   order by revenue desc, o_orderdate limit 10
 *   --input DIR       customer.csv, orders.csv, lineitem.csv (writeTpchCsv in @rebound/example-support)
 *   --output DIR      receives CSV files with a header: l_orderkey,revenue,o_orderdate,o_shippriority
 *   --segment S       market segment (default BUILDING)
 *   --date D          the Q3 date (default 1995-03-15)
 *   --limit N         how many orders (default 10)
 *   --split-size B    bytes per source split (default 8 mb)
 *   --record-delay-ms N  slows the lineitem reader down for demos: N ms per line item
 * Each table may also be a directory of CSV files of that name (lineitem.csv/part-0.csv, ...).
 * Prices are integer cents and discounts integer percents, so revenue is exact: price * (100 - discount)
 * is in 1/10000 of a unit, printed with four decimals.
 */
import { join } from 'node:path';
import { defineJob, sum } from '@rebound/api';
import { intOption, parseOptions, required } from '@rebound/example-support';

const USAGE =
  'tpch-q3 --input DIR --output DIR [--segment S] [--date YYYY-MM-DD] [--limit N] [--split-size B] [--record-delay-ms N]';

interface Customer {
  c_custkey: number;
  c_mktsegment: string;
}
interface Order {
  o_orderkey: number;
  o_custkey: number;
  o_orderdate: string;
  o_shippriority: number;
}
interface LineItem {
  l_orderkey: number;
  l_extendedprice: number;
  l_discount: number;
  l_shipdate: string;
}

/** 1/10000 units to a decimal string (revenue is never negative). */
const money4 = (n: number): string => `${Math.floor(n / 10000)}.${String(n % 10000).padStart(4, '0')}`;

export default defineJob('tpch-q3', (env, args) => {
  const o = parseOptions(args, USAGE, ['input', 'output', 'segment', 'date', 'limit', 'split-size', 'record-delay-ms']);
  const input = required(o.input, 'input', USAGE);
  const segment = o.segment ?? 'BUILDING';
  const date = o.date ?? '1995-03-15';
  const limit = intOption(o.limit, 'limit', 10, 1);
  const splitSizeBytes = o['split-size'] === undefined ? undefined : intOption(o['split-size'], 'split-size', 1, 1);
  const recordDelayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 0);

  // Only the columns the query needs are typed; the others are read as strings.
  const customers = env
    .readCsv<Customer & { [c: string]: unknown }>(join(input, 'customer.csv'), {
      header: true,
      splitSizeBytes,
      columns: {
        c_custkey: 'number',
        c_name: 'string',
        c_mktsegment: 'string',
        c_acctbal: 'number',
        c_comment: 'string?',
      },
    })
    .name('Source: customer')
    .filter((c) => c.c_mktsegment === segment);
  const orders = env
    .readCsv<Order & { [c: string]: unknown }>(join(input, 'orders.csv'), {
      header: true,
      splitSizeBytes,
      columns: {
        o_orderkey: 'number',
        o_custkey: 'number',
        o_orderstatus: 'string',
        o_totalprice: 'number',
        o_orderdate: 'string',
        o_orderpriority: 'string',
        o_shippriority: 'number',
        o_comment: 'string?',
      },
    })
    .name('Source: orders')
    .filter((ord) => ord.o_orderdate < date);
  const items = env
    .readCsv<LineItem & { [c: string]: unknown }>(join(input, 'lineitem.csv'), {
      header: true,
      splitSizeBytes,
      recordDelayMs,
      columns: {
        l_orderkey: 'number',
        l_linenumber: 'number',
        l_quantity: 'number',
        l_extendedprice: 'number',
        l_discount: 'number',
        l_shipdate: 'string',
        l_returnflag: 'string',
      },
    })
    .name('Source: lineitem')
    .filter((l) => l.l_shipdate > date);

  const customerOrders = orders
    .join(customers)
    .where((ord) => ord.o_custkey)
    .equalTo((c) => c.c_custkey)
    .with((ord) => ({ l_orderkey: ord.o_orderkey, o_orderdate: ord.o_orderdate, o_shippriority: ord.o_shippriority }));

  items
    .join(customerOrders)
    .where((l) => l.l_orderkey)
    .equalTo((ord) => ord.l_orderkey)
    .with((l, ord) => ({ ...ord, revenue: l.l_extendedprice * (100 - l.l_discount) }))
    .groupBy(['l_orderkey', 'o_orderdate', 'o_shippriority'])
    .aggregate({ revenue: sum('revenue') })
    // A local top-N per subtask, then one merge: never a sort of all groups in one place.
    .topN(limit, (r) => [r.revenue, r.o_orderdate], ['desc', 'asc'])
    .map((r) => ({ ...r, revenue: money4(r.revenue ?? 0) }))
    .writeAsCsv(required(o.output, 'output', USAGE), {
      columns: ['l_orderkey', 'revenue', 'o_orderdate', 'o_shippriority'],
    });
});
