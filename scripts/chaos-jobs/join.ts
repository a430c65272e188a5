/**
 * The chaos harness's `join` job: the query of examples/join.ts (`ordersWithCustomers`, imported,
 * not copied) over sources that sleep before each batch, so that faults land while it runs. Same
 * rows and output as the example; packages/chaos/src/join-oracle.ts computes the expectation apart
 * from both. It lives outside packages/chaos because a package may not import examples/.
 *   --orders N --customers M --output DIR [--seed S] [--split-size K] [--batch-size B] [--batch-delay-ms D]
 */
import { defineJob, rowGeneratorSource } from '@rebound/api';
import { DelayedSource } from '@rebound/chaos/delayed-source';
import { customer, intOption, order, parseOptions, required } from '@rebound/example-support';
import { ordersWithCustomers } from '../../examples/join.js';

const USAGE =
  'join --orders N --customers M --output DIR [--seed S] [--split-size K] [--batch-size B] [--batch-delay-ms D]';

export default defineJob('chaos-join', (env, args) => {
  const o = parseOptions(args, USAGE, [
    'orders',
    'customers',
    'output',
    'seed',
    'split-size',
    'batch-size',
    'batch-delay-ms',
  ]);
  const orders = intOption(required(o.orders, 'orders', USAGE), 'orders', 0);
  const customers = intOption(required(o.customers, 'customers', USAGE), 'customers', 0);
  const seed = intOption(o.seed, 'seed', 7);
  const splitSize = intOption(o['split-size'], 'split-size', 100_000, 1);
  const batchSize = intOption(o['batch-size'], 'batch-size', 1000, 1);
  const delayMs = intOption(o['batch-delay-ms'], 'batch-delay-ms', 0);
  const orderRows = env.fromSource(
    new DelayedSource(
      rowGeneratorSource(orders, (i) => order(seed, i, customers), { splitSize, batchSize }),
      delayMs,
    ),
    'Source: Orders',
  );
  const customerRows = env.fromSource(
    new DelayedSource(
      rowGeneratorSource(customers, (i) => customer(seed, i), { splitSize, batchSize }),
      delayMs,
    ),
    'Source: Customers',
  );
  ordersWithCustomers(orderRows, customerRows).writeAsText(required(o.output, 'output', USAGE));
});
