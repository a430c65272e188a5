/**
 * The chaos harness's `join` job: examples/join.ts (orders joined with their customers, an inner
 * hash join) with sources that sleep before each batch, so that faults land while it runs.
 *   --orders N --customers M --output DIR [--seed S] [--split-size K] [--batch-size B] [--batch-delay-ms D]
 */
import { defineJob, rowGeneratorSource } from '@rebound/api';
import { intOption, parseOptions, required, customer, formatJoined, order } from '@rebound/example-support';
import { DelayedSource } from './delayed-source.js';

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
  orderRows
    .join(customerRows)
    .where((o) => o.custkey)
    .equalTo((c) => c.custkey)
    .with(formatJoined)
    .writeAsText(required(o.output, 'output', USAGE));
});
