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
  /** Read buffer size of the file stream (default 64 kb). */
  readonly readBufferBytes?: number;
}

export const DEFAULT_TEXT_SPLIT_SIZE_BYTES = 8 * 1024 * 1024;
export const DEFAULT_TEXT_BATCH_SIZE = 1000;

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

function decodeLine(pieces: Buffer[], last: Buffer): string {
  const buf = pieces.length === 0 ? last : Buffer.concat([...pieces, last]);
  const n = buf.length;
  // `\r\n` line ends: the `\r` is not part of the line.
  return buf.toString('utf8', 0, n > 0 && buf[n - 1] === 0x0d ? n - 1 : n);
}

/**
 * Streams the lines that start in [split.start, split.end). A range not starting at 0 begins one
 * byte early and drops everything up to the first newline: that partial line belongs to the
 * previous split (and if the byte before `start` is a newline, a line starts exactly at `start`).
 * The last line is read past `end` to its newline. '\n' never occurs inside a multi-byte UTF-8
 * sequence, so byte ranges are safe to cut anywhere.
 */
export async function* readTextSplit(split: TextFileSplit, options: TextFileSourceOptions = {}): AsyncGenerator<string[]> {
  const delayMs = options.recordDelayMs ?? 0;
  const batchSize = delayMs > 0 ? 1 : (options.batchSize ?? DEFAULT_TEXT_BATCH_SIZE);
  const readStart = split.start === 0 ? 0 : split.start - 1;
  const stream = createReadStream(split.path, { start: readStart, highWaterMark: options.readBufferBytes ?? 64 * 1024 });
  let chunkPos = readStart; // file offset of the current chunk
  let lineStart = readStart; // file offset where the pending line starts
  let skipping = split.start !== 0;
  let pending: Buffer[] = [];
  let batch: string[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      let i = 0;
      while (i < chunk.length) {
        const nl = chunk.indexOf(NEWLINE, i);
        if (nl === -1) {
          if (!skipping) pending.push(chunk.subarray(i));
          break;
        }
        if (skipping) {
          skipping = false;
        } else {
          batch.push(decodeLine(pending, chunk.subarray(i, nl)));
          pending = [];
        }
        i = nl + 1;
        lineStart = chunkPos + i;
        if (lineStart >= split.end) {
          if (batch.length > 0) {
            if (delayMs > 0) await sleep(delayMs);
            yield batch;
          }
          return;
        }
        if (batch.length >= batchSize) {
          if (delayMs > 0) await sleep(delayMs);
          yield batch;
          batch = [];
        }
      }
      chunkPos += chunk.length;
    }
    // End of file without a final newline: the rest is the last line (if it started in range).
    if (!skipping && pending.length > 0 && lineStart < split.end) {
      batch.push(decodeLine(pending.slice(0, -1), pending[pending.length - 1]!));
    }
    if (batch.length > 0) {
      if (delayMs > 0) await sleep(delayMs);
      yield batch;
    }
  } finally {
    stream.destroy();
  }
}

function positiveInt(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n <= 0) throw jobInvalid(`readTextFiles: ${what} must be a positive integer, got ${n}`);
  return n;
}
