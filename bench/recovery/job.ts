/**
 * The recovery benchmark's job: three stages, one source task per split.
 *
 *   Source: DelayedRows (--splits tasks, one split each, --rows-per-split rows, a sleep of
 *           --record-delay-ms per row) -> map to [row % keys, 1]
 *     -> HASH -> Sum(1) per key (--p1 tasks) -> map to [key % keys2, count]
 *     -> HASH -> Sum(1) per key (--p2 tasks) -> Sink: TextFiles (`key<TAB>count`)
 *
 * The delay is a sleep, not a busy loop, so the job's length does not depend on how many cores
 * the machine has free; it stands for I/O-bound reading. Every output count is
 * splits * rows-per-split / keys2 (checked by run.ts), so a lost or doubled split shows.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { RangeGeneratorSource, defineJob, type RangeSplit, type SourceReader } from '@rebound/api';
import { intOption, parseOptions, required } from '@rebound/example-support';

const USAGE =
  'recovery-bench --output DIR [--splits 200] [--rows-per-split 100] [--record-delay-ms 3] [--batch 10] [--keys 1000] [--keys2 50] [--p1 8] [--p2 4]';

/** Rows 0..count-1, one split per `splitSize` rows; the reader sleeps `delayMs` per row. */
class DelayedRowsSource extends RangeGeneratorSource<number> {
  constructor(
    count: number,
    splitSize: number,
    private readonly delayMs: number,
    batchSize: number,
  ) {
    super('DelayedRows', 0, count, (i) => i, { splitSize, batchSize });
  }

  override createReader(): SourceReader<number, RangeSplit> {
    const inner = super.createReader();
    const delayMs = this.delayMs;
    return {
      async *read(split: RangeSplit): AsyncGenerator<number[]> {
        for await (const batch of inner.read(split)) {
          if (delayMs > 0) await sleep(delayMs * batch.length);
          yield batch;
        }
      },
    };
  }
}

export default defineJob('recovery-bench', (env, args) => {
  const o = parseOptions(args, USAGE, [
    'output',
    'splits',
    'rows-per-split',
    'record-delay-ms',
    'batch',
    'keys',
    'keys2',
    'p1',
    'p2',
  ]);
  const splits = intOption(o.splits, 'splits', 200, 1);
  const rowsPerSplit = intOption(o['rows-per-split'], 'rows-per-split', 100, 1);
  const delayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 3);
  const batch = intOption(o.batch, 'batch', 10, 1);
  const keys = intOption(o.keys, 'keys', 1000, 1);
  const keys2 = intOption(o.keys2, 'keys2', 50, 1);
  const p1 = intOption(o.p1, 'p1', 8, 1);
  const p2 = intOption(o.p2, 'p2', 4, 1);

  // Explicit source parallelism: the split-count default is capped at 128.
  env
    .fromSource(new DelayedRowsSource(splits * rowsPerSplit, rowsPerSplit, delayMs, batch), 'Source: DelayedRows', {
      parallelism: splits,
    })
    .map((i): [number, number] => [i % keys, 1])
    .keyBy((t) => t[0])
    .sum(1)
    .setParallelism(p1)
    .map(([k, c]): [number, number] => [k % keys2, c])
    .keyBy((t) => t[0])
    .sum(1)
    .setParallelism(p2)
    .writeAsText(required(o.output, 'output', USAGE), ([k, c]) => `${k}\t${c}`);
});
