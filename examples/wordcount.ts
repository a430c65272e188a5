/**
 * Word count over text files.
 *   --input PATH            a file, or a directory of files (hidden and _-prefixed names skipped)
 *   --output DIR            receives `word<TAB>count` lines
 *   --record-delay-ms N     slows the job down for demos: the SOURCE reader sleeps N ms per line
 *                           it reads (and emits each line on its own), so a job over L lines
 *                           takes about L * N / parallelism ms
 *   --parallelism P         parallelism of the source (default: the number of splits)
 * Words are maximal runs of Unicode letters or digits, lower-cased.
 */
import { defineJob } from '@rebound/api';
import { intOption, parseOptions, required, wordsOf } from '@rebound/example-support';

const USAGE = 'wordcount --input PATH --output DIR [--record-delay-ms N] [--parallelism P]';

export default defineJob('wordcount', (env, args) => {
  const o = parseOptions(args, USAGE, ['input', 'output', 'record-delay-ms', 'parallelism']);
  const recordDelayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 0);
  const parallelism = o.parallelism === undefined ? undefined : intOption(o.parallelism, 'parallelism', 1, 1);
  env
    .readTextFiles(required(o.input, 'input', USAGE), { recordDelayMs, parallelism })
    .flatMap((line) => wordsOf(line))
    .map((w): [string, number] => [w, 1])
    .keyBy((t) => t[0])
    .sum(1)
    .writeAsText(required(o.output, 'output', USAGE), ([w, c]) => `${w}\t${c}`);
});
