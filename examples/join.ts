/**
 * Orders joined with their customers (inner hash join; the customers are the build side).
 *   --orders N        number of generated orders (orderkey 1..N)
 *   --customers M     number of generated customers (custkey 0..M-1); about one order in eleven
 *                     references a customer that does not exist and is dropped
 *   --output DIR      receives `orderkey<TAB>custkey<TAB>name<TAB>nation<TAB>totalprice`
 *   --seed S          generator seed (default 7)
 *   --split-size K    rows per source split (default 100000)
 */
import { defineJob } from '@rebound/api';
import { intOption, parseOptions, required, customer, formatJoined, order } from '@rebound/example-support';

const USAGE = 'join --orders N --customers M --output DIR [--seed S] [--split-size K]';

export default defineJob('join', (env, args) => {
  const o = parseOptions(args, USAGE, ['orders', 'customers', 'output', 'seed', 'split-size']);
  const orders = intOption(required(o.orders, 'orders', USAGE), 'orders', 0);
  const customers = intOption(required(o.customers, 'customers', USAGE), 'customers', 0);
  const seed = intOption(o.seed, 'seed', 7);
  const splitSize = o['split-size'] === undefined ? undefined : intOption(o['split-size'], 'split-size', 1, 1);

  const orderRows = env.generateRows(orders, (i) => order(seed, i, customers), { splitSize }).name('Source: Orders');
  const customerRows = env.generateRows(customers, (i) => customer(seed, i), { splitSize }).name('Source: Customers');
  orderRows
    .join(customerRows)
    .where((o) => o.custkey)
    .equalTo((c) => c.custkey)
    .with(formatJoined)
    .writeAsText(required(o.output, 'output', USAGE));
});
