import { mkdtemp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory under the OS temp dir. */
export function makeTempDir(prefix = 'rebound-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

/** mulberry32: a small, fast, seeded PRNG giving floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/**
 * Words the generator picks from: ASCII, accented Latin, Greek, Cyrillic, CJK, digits and mixed
 * letters+digits, in several capitalizations, so that a tokenizer or lower-casing bug shows up.
 */
export const DEFAULT_VOCABULARY: readonly string[] = [
  'the',
  'The',
  'THE',
  'rebound',
  'Rebound',
  'flink',
  'Flink',
  'batch',
  'job',
  'master',
  'task',
  'manager',
  'partition',
  'recovery',
  'epoch',
  'leader',
  'shuffle',
  'split',
  'source',
  'sink',
  'café',
  'CAFÉ',
  'naïve',
  'über',
  'Über',
  'straße',
  'façade',
  'émigré',
  'λόγος',
  'Λόγος',
  'αλφα',
  'мир',
  'Мир',
  'данные',
  '数据',
  '漢字',
  '42',
  '2024',
  '007',
  'x1',
  'A1b2',
  'v8',
  'utf8',
];

/** What separates words: the tokenizer must split on all of them. */
const SEPARATORS: readonly string[] = [
  ' ',
  ' ',
  ' ',
  '  ',
  '\t',
  ', ',
  '. ',
  '; ',
  ' - ',
  '!',
  '?',
  ' (',
  ') ',
  '"',
  "'",
  '/',
  '…',
  ' — ',
];

export interface TextFilesOptions {
  readonly files: number;
  readonly linesPerFile: number;
  /** Words per line are drawn uniformly from [1, maxWordsPerLine]. */
  readonly maxWordsPerLine?: number;
  readonly seed: number;
  readonly vocabulary?: readonly string[];
  /** File name prefix (default "part"). */
  readonly prefix?: string;
}

/** Writes `files` text files of random words into `dir` (created if needed); returns their paths. */
export async function generateTextFiles(dir: string, opts: TextFilesOptions): Promise<string[]> {
  const rnd = seededRandom(opts.seed);
  const vocab = opts.vocabulary ?? DEFAULT_VOCABULARY;
  const maxWords = opts.maxWordsPerLine ?? 12;
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (let f = 0; f < opts.files; f++) {
    const lines: string[] = [];
    for (let l = 0; l < opts.linesPerFile; l++) {
      const n = 1 + Math.floor(rnd() * maxWords);
      let line = rnd() < 0.1 ? pick(SEPARATORS) : '';
      for (let w = 0; w < n; w++) line += (w > 0 ? pick(SEPARATORS) : '') + pick(vocab);
      lines.push(line);
    }
    // Some blank lines and a missing final newline now and then: both are valid input.
    if (rnd() < 0.5) lines.splice(Math.floor(rnd() * lines.length), 0, '');
    const path = join(dir, `${opts.prefix ?? 'part'}-${String(f).padStart(4, '0')}.txt`);
    await writeFile(path, lines.join('\n') + (rnd() < 0.5 ? '\n' : ''));
    paths.push(path);
  }
  return paths;
}

/**
 * Word counts computed independently of the cluster, with the definition of
 * examples/wordcount.ts: maximal runs of Unicode letters or digits, lower-cased.
 */
export function countWords(texts: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const m of text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu)) counts.set(m[0], (counts.get(m[0]) ?? 0) + 1);
  }
  return counts;
}

export async function countWordsInFiles(paths: readonly string[]): Promise<Map<string, number>> {
  return countWords(await Promise.all(paths.map((p) => readFile(p, 'utf8'))));
}

/** The committed lines of a sink's output directory: every `part-*` file, in name order. */
export async function readSinkLines(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).filter((n) => n.startsWith('part-')).sort();
  const lines: string[] = [];
  for (const name of names) {
    const text = await readFile(join(dir, name), 'utf8');
    lines.push(...text.split('\n').filter((l) => l !== ''));
  }
  return lines;
}

/**
 * Reads `key<TAB>value` lines of a sink's output into a Map. A key written twice means output was
 * not exactly-once and fails loudly rather than being summed or overwritten.
 */
export async function readSinkOutput<V = number>(
  dir: string,
  parseValue: (text: string) => V = Number as unknown as (text: string) => V,
): Promise<Map<string, V>> {
  const out = new Map<string, V>();
  for (const line of await readSinkLines(dir)) {
    const tab = line.lastIndexOf('\t');
    if (tab < 0) throw new Error(`${dir}: line without a tab: ${JSON.stringify(line)}`);
    const key = line.slice(0, tab);
    if (out.has(key))
      throw new Error(`${dir}: key ${JSON.stringify(key)} written more than once (output is not exactly-once)`);
    out.set(key, parseValue(line.slice(tab + 1)));
  }
  return out;
}

/** Human-readable differences between two maps (empty when equal), for assertion messages. */
export function diffMaps<V>(expected: ReadonlyMap<string, V>, actual: ReadonlyMap<string, V>, max = 10): string[] {
  const diffs: string[] = [];
  for (const [k, v] of expected) {
    if (!actual.has(k)) diffs.push(`missing ${JSON.stringify(k)} (expected ${String(v)})`);
    else if (actual.get(k) !== v)
      diffs.push(`${JSON.stringify(k)}: expected ${String(v)}, got ${String(actual.get(k))}`);
  }
  for (const [k, v] of actual) if (!expected.has(k)) diffs.push(`unexpected ${JSON.stringify(k)} = ${String(v)}`);
  return diffs.length > max ? [...diffs.slice(0, max), `... and ${diffs.length - max} more`] : diffs;
}

/**
 * Rewrites CSV table `file` as a directory of the same name: three small files of `small` rows and
 * one holding the rest, each with the header. Read slowly, the big file's reader is still running
 * when the others are done: the window in which a leader kill finds part of a stage finished.
 */
export async function csvAsDirectory(file: string, small: number): Promise<void> {
  const [header, ...rows] = (await readFile(file, 'utf8')).split(/\n(?=\d)/).filter((l) => l.trim() !== '');
  await rm(file);
  await mkdir(file);
  const parts = [
    rows.slice(0, small),
    rows.slice(small, 2 * small),
    rows.slice(2 * small, 3 * small),
    rows.slice(3 * small),
  ];
  await Promise.all(
    parts.map((p, i) => writeFile(join(file, `part-${i}.csv`), [header, ...p].join('\n').replace(/\n*$/, '\n'))),
  );
}
