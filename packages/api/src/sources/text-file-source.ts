import { createReadStream, readdirSync, statSync, type Stats } from 'node:fs';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobInvalid } from '../errors.js';
import type { Source, SourceReader, SourceSplit, SplitEnumeratorContext } from '../source.js';
import { SplitQueueEnumerator, splitsOfState, totalOfState, type SplitQueueState } from './split-queue-enumerator.js';

/** Bytes [start, end) of a file; it owns the lines that START in that range. */
export interface TextFileSplit extends SourceSplit {
  readonly path: string;
  readonly start: number;
  readonly end: number;
}

export interface TextFileSourceOptions {
  /** Files larger than this are split into byte ranges (default 8 mb). */
  readonly splitSizeBytes?: number;
  /** Lines per batch handed to the task (default 1000). */
  readonly batchSize?: number;
  /**
   * Slows the reader down for demos: it sleeps this many ms per LINE and then emits that line as
   * a batch of its own, so progress is smooth. 0 (default): no delay.
   */
  readonly recordDelayMs?: number;
  /** Read buffer size of the file stream (default 256 kb). */
  readonly readBufferBytes?: number;
}

export const DEFAULT_TEXT_SPLIT_SIZE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_TEXT_BATCH_SIZE = 1000;
export const DEFAULT_TEXT_READ_BUFFER_BYTES = 256 * 1024;

export interface InputFile {
  readonly path: string;
  readonly size: number;
}

/**
 * Reads text files line by line (UTF-8, `\n` or `\r\n`). Splits are computed when the enumerator
 * is created on the JobMaster by listing `path`: a file, or a directory (not recursive, sorted by
 * name, skipping names starting with '.' or '_' as Hadoop-style tools do for hidden and marker
 * files).
 */
export class TextFileSource implements Source<string, TextFileSplit, SplitQueueState<TextFileSplit>> {
  readonly sourceName = 'TextFiles';
  readonly supportsBatchSnapshot = true;
  private readonly splitSizeBytes: number;

  constructor(
    readonly path: string,
    private readonly options: TextFileSourceOptions = {},
  ) {
    this.splitSizeBytes = positiveInt(options.splitSizeBytes ?? DEFAULT_TEXT_SPLIT_SIZE_BYTES, 'splitSizeBytes');
    positiveInt(options.batchSize ?? DEFAULT_TEXT_BATCH_SIZE, 'batchSize');
    if (options.recordDelayMs !== undefined && !(options.recordDelayMs >= 0)) {
      throw jobInvalid(`readTextFiles: recordDelayMs must be >= 0, got ${options.recordDelayMs}`);
    }
  }

  estimateSplits(): number {
    return computeTextFileSplits(listInputFilesSync(this.path), this.splitSizeBytes).length;
  }

  async createEnumerator(ctx: SplitEnumeratorContext<TextFileSplit>): Promise<SplitQueueEnumerator<TextFileSplit>> {
    const splits = computeTextFileSplits(await listInputFiles(this.path), this.splitSizeBytes);
    return new SplitQueueEnumerator(ctx, splits);
  }

  restoreEnumerator(
    ctx: SplitEnumeratorContext<TextFileSplit>,
    state: SplitQueueState<TextFileSplit>,
  ): SplitQueueEnumerator<TextFileSplit> {
    return new SplitQueueEnumerator(ctx, splitsOfState<TextFileSplit>(this.sourceName, state), totalOfState(state));
  }

  createReader(): SourceReader<string, TextFileSplit> {
    return { read: (split) => readTextSplit(split, this.options) };
  }
}

/** One split per file, and byte ranges of `splitSizeBytes` for larger files. Empty files have none. */
export function computeTextFileSplits(files: readonly InputFile[], splitSizeBytes: number): TextFileSplit[] {
  const splits: TextFileSplit[] = [];
  for (const f of files) {
    for (let start = 0; start < f.size; start += splitSizeBytes) {
      const end = Math.min(start + splitSizeBytes, f.size);
      splits.push({ id: `${f.path}:${start}-${end}`, path: f.path, start, end });
    }
  }
  return splits;
}

function isListed(name: string): boolean {
  return !name.startsWith('.') && !name.startsWith('_');
}

function missing(path: string, cause: unknown): Error {
  return jobInvalid(`input path '${path}' does not exist or cannot be read (${(cause as Error).message})`, cause);
}

export function listInputFilesSync(path: string): InputFile[] {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (err) {
    throw missing(path, err);
  }
  if (!st.isDirectory()) return [{ path, size: st.size }];
  const files: InputFile[] = [];
  for (const name of readdirSync(path).filter(isListed).sort()) {
    const p = join(path, name);
    const s = statSync(p);
    if (s.isFile()) files.push({ path: p, size: s.size });
  }
  return files;
}

export async function listInputFiles(path: string): Promise<InputFile[]> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (err) {
    throw missing(path, err);
  }
  if (!st.isDirectory()) return [{ path, size: st.size }];
  const files: InputFile[] = [];
  for (const name of (await readdir(path)).filter(isListed).sort()) {
    const p = join(path, name);
    const s = await stat(p);
    if (s.isFile()) files.push({ path: p, size: s.size });
  }
  return files;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

/**
 * Appends the lines of `text` (whole lines joined by `\n`, no final newline) to `batch`. One
 * decode per chunk and a JS split is several times cheaper than a Buffer.toString per line.
 */
function pushLines(text: string, batch: string[]): void {
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    // `\r\n` line ends: the `\r` is not part of the line.
    batch.push(line.length > 0 && line.charCodeAt(line.length - 1) === CR ? line.slice(0, -1) : line);
  }
}

/**
 * Streams the lines that start in [split.start, split.end). A range not starting at 0 begins one
 * byte early and drops everything up to the first newline: that partial line belongs to the
 * previous split (and if the byte before `start` is a newline, a line starts exactly at `start`).
 * The last line is read past `end` to its newline. '\n' never occurs inside a multi-byte UTF-8
 * sequence, so byte ranges are safe to cut anywhere, and so is a chunk at its last newline: each
 * chunk's whole lines are decoded at once, the partial line after them waits for the next chunk.
 */
export async function* readTextSplit(
  split: TextFileSplit,
  options: TextFileSourceOptions = {},
): AsyncGenerator<string[]> {
  const delayMs = options.recordDelayMs ?? 0;
  const batchSize = delayMs > 0 ? 1 : (options.batchSize ?? DEFAULT_TEXT_BATCH_SIZE);
  const readStart = split.start === 0 ? 0 : split.start - 1;
  const stream = createReadStream(split.path, {
    start: readStart,
    highWaterMark: options.readBufferBytes ?? DEFAULT_TEXT_READ_BUFFER_BYTES,
  });
  let carry: Buffer | undefined; // a partial line: the bytes after the last newline seen
  let carryPos = readStart; // file offset of carry[0] (or of the next chunk when there is no carry)
  let skipping = split.start !== 0;
  let batch: string[] = [];
  const emit = async function* (flushAll: boolean): AsyncGenerator<string[]> {
    if (batch.length < batchSize && !(flushAll && batch.length > 0)) return;
    const all = batch;
    batch = [];
    let i = 0;
    for (; i + batchSize <= all.length; i += batchSize) {
      if (delayMs > 0) await sleep(delayMs);
      yield i === 0 && all.length === batchSize ? all : all.slice(i, i + batchSize);
    }
    if (i === all.length) return;
    if (!flushAll) {
      batch = all.slice(i);
      return;
    }
    if (delayMs > 0) await sleep(delayMs);
    yield all.slice(i);
  };
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const buf = carry ? Buffer.concat([carry, chunk]) : chunk;
      const bufPos = carryPos;
      let pos = 0;
      if (skipping) {
        const nl = buf.indexOf(NEWLINE);
        if (nl === -1) {
          carry = undefined;
          carryPos = bufPos + buf.length;
          continue;
        }
        skipping = false;
        pos = nl + 1;
      }
      // The last line we own starts before split.end: it ends at the first newline at or after end - 1.
      const stop = buf.indexOf(NEWLINE, Math.max(pos, split.end - 1 - bufPos));
      if (stop !== -1) {
        // Nothing is ours when the line at pos already starts at or after end (a split inside one line).
        if (bufPos + pos < split.end) pushLines(buf.toString('utf8', pos, stop), batch);
        yield* emit(true);
        return;
      }
      const last = buf.lastIndexOf(NEWLINE);
      if (last >= pos) {
        pushLines(buf.toString('utf8', pos, last), batch);
        pos = last + 1;
      }
      carry = pos < buf.length ? buf.subarray(pos) : undefined;
      carryPos = bufPos + pos;
      yield* emit(false);
    }
    // End of file without a final newline: the rest is the last line (if it started in range).
    if (!skipping && carry !== undefined && carryPos < split.end) pushLines(carry.toString('utf8'), batch);
    yield* emit(true);
  } finally {
    stream.destroy();
  }
}

function positiveInt(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n <= 0)
    throw jobInvalid(`readTextFiles: ${what} must be a positive integer, got ${n}`);
  return n;
}
