import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobShape } from './fault-draw.js';
import { expectedJoinLines } from './join-oracle.js';
import { diffSortedLines } from './line-diff.js';
import { expectedQ1Lines } from './q1-oracle.js';
import { Prng } from './prng.js';
import { checkNumberedLines } from './unique-ids-oracle.js';

export const JOB_NAMES = ['wordcount', 'aggregation', 'join', 'unique-ids'] as const;
export type JobName = (typeof JOB_NAMES)[number];

/**
 * The jobs a run draws when `--job` names none. A new job goes to JOB_NAMES only, like a
 * by-name-only fault kind: drawing from a longer list would change the plans of recorded seeds.
 */
export const DRAWN_JOB_NAMES = ['wordcount', 'aggregation', 'join'] as const satisfies readonly JobName[];

export function isJobName(name: string): name is JobName {
  return (JOB_NAMES as readonly string[]).includes(name);
}

/** The job of a run and its input, drawn from the run's seed. */
export type JobParams =
  | {
      readonly job: 'wordcount';
      readonly files: number;
      readonly linesPerFile: readonly number[];
      readonly lineDelayMs: number;
      readonly textSeed: number;
    }
  | {
      readonly job: 'unique-ids';
      readonly files: number;
      readonly linesPerFile: readonly number[];
      readonly lineDelayMs: number;
      readonly textSeed: number;
      /** Ids per coordinator request: small, so that a run makes hundreds of them. */
      readonly blockSize: number;
      readonly parallelism: number;
    }
  | {
      readonly job: 'aggregation';
      readonly rows: number;
      readonly splitSize: number;
      readonly batchSize: number;
      readonly batchDelayMs: number;
      readonly dataSeed: number;
    }
  | {
      readonly job: 'join';
      readonly orders: number;
      readonly customers: number;
      readonly splitSize: number;
      readonly batchSize: number;
      readonly batchDelayMs: number;
      readonly dataSeed: number;
    };

/**
 * Job modules, relative to the repository root. aggregation and join run the query of an example
 * over slowed-down sources; they import the example, which no module of a package may.
 */
export const JOB_MODULES: Readonly<Record<JobName, string>> = {
  wordcount: 'examples/wordcount.ts',
  aggregation: 'scripts/chaos-jobs/aggregation.ts',
  join: 'scripts/chaos-jobs/join.ts',
  'unique-ids': 'examples/unique-ids.ts',
};

/**
 * Sizes are chosen so that a fault-free run takes several seconds on a loaded 2-core machine:
 * long enough for faults to land in the middle, short enough for hundreds of runs.
 */
export function drawJobParams(prng: Prng, job: JobName): JobParams {
  switch (job) {
    case 'wordcount': {
      const files = prng.int(8, 12);
      return {
        job,
        files,
        linesPerFile: Array.from({ length: files }, () => prng.int(50, 180)),
        lineDelayMs: 25,
        textSeed: prng.int(1, 1_000_000),
      };
    }
    case 'unique-ids': {
      // Longer files than wordcount's, which has a reduce stage after its sources: this job would
      // be over in a few seconds, too soon for a second fault.
      const files = prng.int(8, 12);
      return {
        job,
        files,
        linesPerFile: Array.from({ length: files }, () => prng.int(80, 250)),
        lineDelayMs: 25,
        textSeed: prng.int(1, 1_000_000),
        blockSize: prng.int(3, 20),
        // With fewer subtasks than files a subtask reads several splits and asks for blocks across them.
        parallelism: prng.int(4, files),
      };
    }
    case 'aggregation': {
      const splits = prng.int(8, 12);
      const splitSize = prng.int(15, 30) * 100;
      return {
        job,
        rows: splits * splitSize - prng.int(0, splitSize - 1),
        splitSize,
        batchSize: 50,
        batchDelayMs: 50,
        dataSeed: prng.int(1, 1_000_000),
      };
    }
    case 'join': {
      const splitSize = prng.int(10, 20) * 100;
      const orderSplits = prng.int(6, 9);
      return {
        job,
        orders: orderSplits * splitSize - prng.int(0, splitSize - 1),
        customers: prng.int(splitSize / 2, splitSize + splitSize / 2),
        splitSize,
        batchSize: 50,
        batchDelayMs: 50,
        dataSeed: prng.int(1, 1_000_000),
      };
    }
  }
}

export function jobShape(p: JobParams): JobShape {
  switch (p.job) {
    case 'wordcount':
      return { sourceSubtasks: p.files, vertices: 2 };
    case 'aggregation':
      return { sourceSubtasks: Math.ceil(p.rows / p.splitSize), vertices: 2 };
    case 'join':
      return { sourceSubtasks: Math.ceil(p.orders / p.splitSize) + Math.ceil(p.customers / p.splitSize), vertices: 3 };
    // Source, numbering and sink chain into one vertex (no shuffle, so no partitions either).
    case 'unique-ids':
      return { sourceSubtasks: p.parallelism, vertices: 1 };
  }
}

export function describeJob(p: JobParams): string {
  switch (p.job) {
    case 'wordcount':
      return `wordcount ${p.files} files, ${p.linesPerFile.reduce((a, b) => a + b, 0)} lines, ${p.lineDelayMs} ms/line`;
    case 'aggregation':
      return `aggregation ${p.rows} rows in splits of ${p.splitSize}, ${p.batchDelayMs} ms/${p.batchSize} rows`;
    case 'join':
      return `join ${p.orders} orders x ${p.customers} customers in splits of ${p.splitSize}, ${p.batchDelayMs} ms/${p.batchSize} rows`;
    case 'unique-ids':
      return `unique-ids ${p.files} files, ${p.linesPerFile.reduce((a, b) => a + b, 0)} lines, parallelism ${p.parallelism}, blocks of ${p.blockSize} ids, ${p.lineDelayMs} ms/line`;
  }
}

// Words of several scripts and capitalizations: a lower-casing or tokenizing slip shows up as a diff.
const VOCABULARY = [
  'the',
  'The',
  'THE',
  'rebound',
  'Rebound',
  'flink',
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
  'chaos',
  'seed',
  'fault',
  'café',
  'CAFÉ',
  'naïve',
  'über',
  'straße',
  'λόγος',
  'Λόγος',
  'мир',
  'Мир',
  '数据',
  '漢字',
  '42',
  '2024',
  'x1',
  'A1b2',
];
const SEPARATORS = [' ', ' ', ' ', '  ', '\t', ', ', '. ', '; ', ' - ', '!', '?', ' (', ') ', '"', '/', '…'];

/** The seeded text files of a wordcount or unique-ids run. */
export interface TextInput {
  readonly linesPerFile: readonly number[];
  readonly textSeed: number;
}

/** The text of input file `f` of a wordcount or unique-ids run. */
export function wordcountFileText(p: TextInput, f: number): string {
  const prng = new Prng(p.textSeed * 1000 + f);
  const lines: string[] = [];
  for (let l = 0; l < p.linesPerFile[f]!; l++) {
    const n = prng.int(1, 10);
    let line = '';
    for (let w = 0; w < n; w++) line += (w > 0 ? prng.pick(SEPARATORS) : '') + prng.pick(VOCABULARY);
    lines.push(line);
  }
  return lines.join('\n') + '\n';
}

/** Writes the run's input (the text files; aggregation and join generate their rows). */
export async function writeJobInput(p: JobParams, inputDir: string): Promise<void> {
  if (p.job !== 'wordcount' && p.job !== 'unique-ids') return;
  await mkdir(inputDir, { recursive: true });
  for (let f = 0; f < p.files; f++) {
    await writeFile(join(inputDir, `part-${String(f).padStart(3, '0')}.txt`), wordcountFileText(p, f));
  }
}

export function jobArgs(p: JobParams, inputDir: string, outputDir: string): string[] {
  switch (p.job) {
    case 'wordcount':
      return ['--input', inputDir, '--output', outputDir, '--record-delay-ms', String(p.lineDelayMs)];
    case 'unique-ids':
      return [
        '--input',
        inputDir,
        '--output',
        outputDir,
        '--record-delay-ms',
        String(p.lineDelayMs),
        '--block-size',
        String(p.blockSize),
        '--parallelism',
        String(p.parallelism),
      ];
    case 'aggregation':
      return [
        '--rows',
        String(p.rows),
        '--output',
        outputDir,
        '--seed',
        String(p.dataSeed),
        '--split-size',
        String(p.splitSize),
        '--batch-size',
        String(p.batchSize),
        '--batch-delay-ms',
        String(p.batchDelayMs),
      ];
    case 'join':
      return [
        '--orders',
        String(p.orders),
        '--customers',
        String(p.customers),
        '--output',
        outputDir,
        '--seed',
        String(p.dataSeed),
        '--split-size',
        String(p.splitSize),
        '--batch-size',
        String(p.batchSize),
        '--batch-delay-ms',
        String(p.batchDelayMs),
      ];
  }
}

/**
 * Word counts computed here, without the job's code: maximal runs of Unicode letters or digits,
 * lower-cased (the definition examples/wordcount.ts documents).
 */
export function countWords(texts: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) {
    let word = '';
    for (const ch of text.toLowerCase()) {
      if (/[\p{L}\p{N}]/u.test(ch)) {
        word += ch;
      } else if (word) {
        counts.set(word, (counts.get(word) ?? 0) + 1);
        word = '';
      }
    }
    if (word) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  return counts;
}

/**
 * The sorted output lines a fault-free run of the job must produce; for unique-ids, the input
 * lines without the ids, which are the coordinator's to choose (see outputOracle).
 */
export function expectedLines(p: JobParams): string[] {
  const lines: string[] = [];
  switch (p.job) {
    case 'wordcount': {
      const texts = Array.from({ length: p.files }, (_, f) => wordcountFileText(p, f));
      for (const [w, c] of countWords(texts)) lines.push(`${w}\t${c}`);
      break;
    }
    case 'unique-ids': {
      for (let f = 0; f < p.files; f++) lines.push(...wordcountFileText(p, f).split('\n').slice(0, -1));
      break;
    }
    // Both from the query's definition, sharing no code with the job: see the oracles' files.
    case 'aggregation': {
      lines.push(...expectedQ1Lines(p.rows, p.dataSeed));
      break;
    }
    case 'join': {
      lines.push(...expectedJoinLines(p.orders, p.customers, p.dataSeed));
      break;
    }
  }
  return lines.sort();
}

/** Compares the sorted expected lines with the sorted output lines: the problems, none if they match. */
export type OutputOracle = (expected: readonly string[], actual: readonly string[]) => string[];

/** Ids are the coordinator's to choose, so unique-ids output is judged by its promises instead. */
export function outputOracle(p: JobParams): OutputOracle {
  return p.job === 'unique-ids' ? checkNumberedLines : diffSortedLines;
}

export interface OutputCheck {
  /** Empty when the output is exactly the expected one. */
  readonly problems: string[];
  readonly lines: number;
  readonly partFiles: string[];
}

/**
 * Compares a committed output directory with the expected lines: the lines as `oracle` judges
 * them (by default the same lines, each exactly as often); one `part-NNNNN` file per sink subtask
 * and nothing else; `_SUCCESS` present.
 */
export async function checkOutput(
  outputDir: string,
  expected: readonly string[],
  sinkParallelism: number | undefined,
  oracle: OutputOracle = diffSortedLines,
): Promise<OutputCheck> {
  const problems: string[] = [];
  let names: string[];
  try {
    names = await readdir(outputDir);
  } catch (err) {
    return {
      problems: [`output directory ${outputDir} is missing (${(err as NodeJS.ErrnoException).code ?? String(err)})`],
      lines: 0,
      partFiles: [],
    };
  }
  const parts = names.filter((n) => n.startsWith('part-')).sort();
  if (!names.includes('_SUCCESS')) problems.push('no _SUCCESS file in the output directory');
  if (sinkParallelism !== undefined) {
    const want = Array.from({ length: sinkParallelism }, (_, i) => `part-${String(i).padStart(5, '0')}`);
    const extra = parts.filter((n) => !want.includes(n));
    const missing = want.filter((n) => !parts.includes(n));
    if (extra.length > 0)
      problems.push(`duplicate or extra output files: ${extra.join(', ')} (sink parallelism ${sinkParallelism})`);
    if (missing.length > 0) problems.push(`missing output files: ${missing.join(', ')}`);
  }
  const tmp = await stat(join(outputDir, '.rebound-tmp')).then(
    () => true,
    () => false,
  );
  if (tmp) problems.push('temporary sink files left in .rebound-tmp after the commit');
  const actual: string[] = [];
  for (const n of parts) {
    const text = await readFile(join(outputDir, n), 'utf8');
    for (const line of text.split('\n')) if (line !== '') actual.push(line);
  }
  actual.sort();
  problems.push(...oracle(expected, actual));
  return { problems, lines: actual.length, partFiles: parts };
}
