/**
 * The single-process baseline: the same wordcount as examples/wordcount.ts written the way one
 * would in plain Node — stream each file, split lines, count `wordsOf(line)` in a Map, write
 * `word<TAB>count` lines and fsync (as the cluster's sink does). Run as its own process so its
 * heap and JIT state are as fresh as a TaskManager's:
 *   npx tsx bench/throughput/baseline.ts --input DIR --output FILE
 * Prints one JSON line: {"seconds", "cpuSeconds", "bytes", "lines", "words", "distinct"}.
 */
import { createReadStream } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { wordsOf } from '@rebound/example-support';

export interface BaselineResult {
  /** Reading, counting and writing; process start-up excluded. */
  readonly seconds: number;
  /** CPU time (user + system, all threads: GC included) of the same span. */
  readonly cpuSeconds: number;
  readonly bytes: number;
  readonly lines: number;
  readonly words: number;
  readonly distinct: number;
}

/** Files of `dir` as the TextFileSource lists them: sorted, hidden and `_`-prefixed names skipped. */
export async function listInput(dir: string): Promise<string[]> {
  return (await readdir(dir))
    .filter((n) => !n.startsWith('.') && !n.startsWith('_'))
    .sort()
    .map((n) => join(dir, n));
}

export async function countWords(inputDir: string, outputFile: string): Promise<BaselineResult> {
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const counts = new Map<string, number>();
  let bytes = 0;
  let lines = 0;
  let words = 0;
  const countLine = (line: string): void => {
    lines++;
    for (const w of wordsOf(line)) {
      counts.set(w, (counts.get(w) ?? 0) + 1);
      words++;
    }
  };
  for (const file of await listInput(inputDir)) {
    // Bytes after a chunk's last newline wait for the next chunk: decoding whole lines only keeps
    // multi-byte characters whole.
    let carry: Buffer | undefined;
    for await (const piece of createReadStream(file) as AsyncIterable<Buffer>) {
      bytes += piece.length;
      const chunk = carry ? Buffer.concat([carry, piece]) : piece;
      const nl = chunk.lastIndexOf(0x0a);
      if (nl === -1) {
        carry = chunk;
        continue;
      }
      for (const line of chunk.toString('utf8', 0, nl).split('\n')) countLine(line);
      carry = nl + 1 < chunk.length ? chunk.subarray(nl + 1) : undefined;
    }
    if (carry) countLine(carry.toString('utf8'));
  }
  let out = '';
  for (const [w, c] of counts) out += `${w}\t${c}\n`;
  const fh = await open(outputFile, 'w');
  try {
    await fh.writeFile(out);
    await fh.sync();
  } finally {
    await fh.close();
  }
  const cpu = process.cpuUsage(cpu0);
  return { seconds: (performance.now() - t0) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, bytes, lines, words, distinct: counts.size };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { input: { type: 'string' }, output: { type: 'string' } }, strict: true });
  if (!values.input || !values.output) throw new Error('usage: baseline.ts --input DIR --output FILE');
  const result = await countWords(values.input, values.output);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  await main();
}
