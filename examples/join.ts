/**
 * Orders joined with their customers:
 *   select o_orderkey, c_custkey, c_name, c_nation, o_totalprice
 *   from orders join customer on o_custkey = c_custkey
 * an inner hash join whose build side is the customers.
 *   --orders N        number of generated orders (orderkey 1..N)
 *   --customers M     number of generated customers (custkey 0..M-1); about one order in eleven
 *                     references a customer that does not exist and is dropped
 *   --output DIR      receives `orderkey<TAB>custkey<TAB>name<TAB>nation<TAB>totalprice`
 *   --seed S          generator seed (default 7)
 *   --split-size K    rows per source split (default 100000)
 *   --record-delay-ms N  the orders reader waits N ms before each order (demos and failover tests)
 * Rows are pure functions of (seed, index) (`order` and `customer` in @rebound/example-support);
 * totalprice is integer cents.
 */
import { defineJob, type DataSet } from '@rebound/api';
import {
  customer,
  intOption,
  order,
  parseOptions,
  required,
  type Customer,
  type Order,
} from '@rebound/example-support';

const USAGE = 'join --orders N --customers M --output DIR [--seed S] [--split-size K] [--record-delay-ms N]';

/** Cents to a decimal string (prices are never negative). */
const money = (cents: number): string => `${Math.floor(cents / 100)}.${String(cents % 100).padStart(2, '0')}`;

/**
 * The query, from orders and customers to output lines. A function of its inputs so that the
 * chaos harness runs this very query over sources of its own (scripts/chaos-jobs/join.ts).
 */
export function ordersWithCustomers(orders: DataSet<Order>, customers: DataSet<Customer>): DataSet<string> {
  return orders
    .join(customers)
    .where((ord) => ord.custkey)
    .equalTo((c) => c.custkey)
    .with((ord, c) => ({
      orderkey: ord.orderkey,
      custkey: c.custkey,
      name: c.name,
      nation: c.nation,
      totalprice: ord.totalprice,
    }))
    .map((r) => [r.orderkey, r.custkey, r.name, r.nation, money(r.totalprice)].join('\t'));
}

export default defineJob('join', (env, args) => {
  const o = parseOptions(args, USAGE, ['orders', 'customers', 'output', 'seed', 'split-size', 'record-delay-ms']);
  const orders = intOption(required(o.orders, 'orders', USAGE), 'orders', 0);
  const customers = intOption(required(o.customers, 'customers', USAGE), 'customers', 0);
  const seed = intOption(o.seed, 'seed', 7);
  const splitSize = o['split-size'] === undefined ? undefined : intOption(o['split-size'], 'split-size', 1, 1);
  const recordDelayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 0);

  const orderRows = env
    .generateRows(orders, (i) => order(seed, i, customers), { splitSize, recordDelayMs })
    .name('Source: Orders');
  const customerRows = env.generateRows(customers, (i) => customer(seed, i), { splitSize }).name('Source: Customers');
  ordersWithCustomers(orderRows, customerRows).writeAsText(required(o.output, 'output', USAGE));
});
