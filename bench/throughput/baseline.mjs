// The single-process baseline of the throughput benchmark, written the obvious way in plain Node
// (plain JavaScript, no tsx, no Rebound API), so its start-up is what a user's script pays:
// read each file, lower-case it, match the same word rule as examples/wordcount.ts (maximal runs
// of Unicode letters or digits) with one global regex, count in a Map, write `word<TAB>count`
// lines and fsync (as the cluster's sink does). Of the obvious variants measured (regex exec
// over the whole file, String.match over the whole file, split into lines and match each line)
// exec over the whole file used the least CPU, so the cluster is compared with that one.
//   node bench/throughput/baseline.mjs --input DIR --output FILE
// Prints one JSON line: {"seconds", "cpuSeconds", "peakRssMb", "bytes", "lines", "words", "distinct"}.
import { openSync, fsyncSync, closeSync, readFileSync, readdirSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { input: { type: 'string' }, output: { type: 'string' } }, strict: true });
if (!values.input || !values.output) {
  process.stderr.write('usage: baseline.mjs --input DIR --output FILE\n');
  process.exit(2);
}
const t0 = performance.now();
const cpu0 = process.cpuUsage();
// The files as the TextFileSource lists them: sorted, hidden and `_`-prefixed names skipped.
const files = readdirSync(values.input)
  .filter((n) => !n.startsWith('.') && !n.startsWith('_'))
  .sort()
  .map((n) => join(values.input, n));
const counts = new Map();
const word = /[\p{L}\p{N}]+/gu;
let bytes = 0;
let lines = 0;
let words = 0;
for (const file of files) {
  const raw = readFileSync(file);
  bytes += raw.length;
  for (let i = raw.indexOf(0x0a); i !== -1; i = raw.indexOf(0x0a, i + 1)) lines++;
  if (raw.length > 0 && raw[raw.length - 1] !== 0x0a) lines++;
  const text = raw.toString('utf8').toLowerCase();
  for (let m = word.exec(text); m !== null; m = word.exec(text)) {
    const w = m[0];
    counts.set(w, (counts.get(w) ?? 0) + 1);
    words++;
  }
}
let out = '';
for (const [w, c] of counts) out += `${w}\t${c}\n`;
const fd = openSync(values.output, 'w');
const buf = Buffer.from(out, 'utf8');
for (let off = 0; off < buf.length;) off += writeSync(fd, buf, off);
fsyncSync(fd);
closeSync(fd);
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  `${JSON.stringify({
    seconds: (performance.now() - t0) / 1000,
    cpuSeconds: (cpu.user + cpu.system) / 1e6,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    bytes,
    lines,
    words,
    distinct: counts.size,
  })}\n`,
);
