/**
 * The most frequent words of text files, most frequent first (ties: alphabetical).
 *   --input PATH      a file, or a directory of files
 *   --output DIR      receives `word<TAB>count` lines, in order, in one file
 *   --n N             how many words (default 10)
 *   --record-delay-ms N  the reader waits N ms per line (demos and failover tests)
 * topN keeps a top-N per subtask and merges those in one subtask: no sort of the whole vocabulary.
 */
import { defineJob } from '@rebound/api';
import { intOption, parseOptions, required, wordsOf } from '@rebound/example-support';

const USAGE = 'top-words --input PATH --output DIR [--n N] [--record-delay-ms N]';

export default defineJob('top-words', (env, args) => {
  const o = parseOptions(args, USAGE, ['input', 'output', 'n', 'record-delay-ms']);
  const n = intOption(o.n, 'n', 10, 1);
  const recordDelayMs = intOption(o['record-delay-ms'], 'record-delay-ms', 0);
  env
    .readTextFiles(required(o.input, 'input', USAGE), { recordDelayMs })
    .flatMap((line) => wordsOf(line))
    .map((w): [string, number] => [w, 1])
    .keyBy((t) => t[0])
    .sum(1)
    .topN(n, ([w, c]) => [c, w], ['desc', 'asc'])
    .writeAsText(required(o.output, 'output', USAGE), ([w, c]) => `${w}\t${c}`);
});
