/**
 * The chaos harness's `aggregation` job: examples/tpch-q1.ts (a TPC-H Q1-style grouped
 * aggregation over generated lineitem rows) with a source that sleeps before each batch, so that
 * faults land while it runs. Same rows, same output format as the example.
 *   --rows N --output DIR [--seed S] [--split-size K] [--batch-size B] [--batch-delay-ms D]
 */
import { defineJob, rowGeneratorSource } from '@rebound/api';
import {
  intOption,
  parseOptions,
  required,
  formatQ1,
  lineItem,
  mergeQ1,
  q1Acc,
  Q1_SHIP_DATE_CUTOFF,
} from '@rebound/example-support';
import { DelayedSource } from './delayed-source.js';

const USAGE = 'aggregation --rows N --output DIR [--seed S] [--split-size K] [--batch-size B] [--batch-delay-ms D]';

export default defineJob('chaos-aggregation', (env, args) => {
  const o = parseOptions(args, USAGE, ['rows', 'output', 'seed', 'split-size', 'batch-size', 'batch-delay-ms']);
  const rows = intOption(required(o.rows, 'rows', USAGE), 'rows', 0);
  const seed = intOption(o.seed, 'seed', 42);
  const splitSize = intOption(o['split-size'], 'split-size', 100_000, 1);
  const batchSize = intOption(o['batch-size'], 'batch-size', 1000, 1);
  const delayMs = intOption(o['batch-delay-ms'], 'batch-delay-ms', 0);
  const source = new DelayedSource(
    rowGeneratorSource(rows, (i) => lineItem(seed, i), { splitSize, batchSize }),
    delayMs,
  );
  env
    .fromSource(source, 'Source: Lineitem')
    .filter((item) => item.shipdate <= Q1_SHIP_DATE_CUTOFF)
    .map(q1Acc)
    .keyBy((acc) => `${acc[0]}|${acc[1]}`)
    .reduce(mergeQ1)
    .writeAsText(required(o.output, 'output', USAGE), formatQ1);
});
