/**
 * The chaos harness's `aggregation` job: the query of examples/tpch-q1.ts (`q1`, imported, not
 * copied) over a source that sleeps before each batch, so that faults land while it runs. Same
 * rows and output as the example; packages/chaos/src/q1-oracle.ts computes the expectation apart
 * from both. It lives outside packages/chaos because a package may not import examples/.
 *   --rows N --output DIR [--seed S] [--split-size K] [--batch-size B] [--batch-delay-ms D]
 */
import { defineJob, rowGeneratorSource } from '@rebound/api';
import { DelayedSource } from '@rebound/chaos/delayed-source';
import { intOption, lineItem, parseOptions, required } from '@rebound/example-support';
import { q1 } from '../../examples/tpch-q1.js';

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
  q1(env.fromSource(source, 'Source: Lineitem')).writeAsText(required(o.output, 'output', USAGE));
});
