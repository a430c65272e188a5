import { createReadStream } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { setTimeout as sleep } from 'node:timers/promises';
import { jobInvalid } from '../errors.js';
import type { Source, SourceReader, SourceSplit, SplitEnumeratorContext } from '../source.js';
import {
  CsvRecordParser,
  resolveColumns,
  resolveDialect,
  typedRow,
  type CsvOptions,
  type RawRecord,
  type ResolvedColumn,
} from './csv-format.js';
import { SplitQueueEnumerator, splitsOfState, totalOfState, type SplitQueueState } from './split-queue-enumerator.js';
import {
  DEFAULT_TEXT_BATCH_SIZE,
  DEFAULT_TEXT_READ_BUFFER_BYTES,
  DEFAULT_TEXT_SPLIT_SIZE_BYTES,
  listInputFiles,
  listInputFilesSync,
  type InputFile,
} from './text-file-source.js';

/**
 * Bytes [start, end) of a CSV file, both record boundaries: the split owns exactly the records
 * in it. `line` is the file line `start` is on (for error messages); `names` the header's column
 * names when the job declared no columns.
 */
export interface CsvSplit extends SourceSplit {
  readonly path: string;
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly names?: string[];
}

export interface CsvSourceOptions extends CsvOptions {
  /** Files larger than this are split into byte ranges (default 8 mb). */
  readonly splitSizeBytes?: number;
  /** Records per batch handed to the task (default 1000). */
  readonly batchSize?: number;
  /** Slows the reader down for demos and tests: sleeps this many ms per record, emitted alone. */
  readonly recordDelayMs?: number;
}

export type CsvRow = { [name: string]: string | number | boolean | null };

/**
 * Reads CSV files (RFC 4180) into rows, split by byte ranges like text files.
 *
 * The split rule. A quoted field may hold line breaks, so a byte offset alone does not tell
 * whether a record starts after the next newline: that depends on whether the offset is inside
 * quotes, i.e. on the parity of the quote characters before it (RFC 4180 allows quotes only in
 * quoted fields, where they come doubled, so every quote toggles "inside"). No reader of a split
 * in the middle of a file can know it without reading from the start, so the boundaries are
 * decided once, when the enumerator is created on the JobMaster: a file of more than one split
 * is scanned and each nominal cut `k * splitSizeBytes` moves forward to the first position after
 * a newline at even quote parity. The splits, with their boundaries, are the enumerator's state,
 * so a new leader restores the same ones from its batch snapshot and a rerun subtask reads
 * exactly the records its first attempt read. A quote where RFC 4180 does not allow one makes the
 * reader fail (file, line, column), since the parity rule would no longer hold.
 */
export class CsvSource<T = CsvRow> implements Source<T, CsvSplit, SplitQueueState<CsvSplit>> {
  readonly sourceName = 'Csv';
  readonly supportsBatchSnapshot = true;
  private readonly splitSizeBytes: number;
  private readonly batchSize: number;
  private readonly dialect: { delimiter: string; quote: string };
  private readonly columns: ResolvedColumn[] | undefined;

  constructor(
    readonly path: string,
    private readonly options: CsvSourceOptions = {},
  ) {
    this.splitSizeBytes = positiveInt(options.splitSizeBytes ?? DEFAULT_TEXT_SPLIT_SIZE_BYTES, 'splitSizeBytes');
    const delay = options.recordDelayMs ?? 0;
    if (!(delay >= 0)) throw jobInvalid(`readCsv: recordDelayMs must be >= 0, got ${delay}`);
    this.batchSize = delay > 0 ? 1 : positiveInt(options.batchSize ?? DEFAULT_TEXT_BATCH_SIZE, 'batchSize');
    this.dialect = resolveDialect(options);
    this.columns = resolveColumns(options.columns);
  }

  /** Nominal byte ranges (before they move to record boundaries): only a count. */
  estimateSplits(): number {
    return listInputFilesSync(this.path).reduce((n, f) => n + Math.ceil(f.size / this.splitSizeBytes), 0);
  }

  async createEnumerator(ctx: SplitEnumeratorContext<CsvSplit>): Promise<SplitQueueEnumerator<CsvSplit>> {
    const splits: CsvSplit[] = [];
    for (const f of await listInputFiles(this.path)) splits.push(...(await this.splitsOf(f)));
    return new SplitQueueEnumerator(ctx, splits);
  }

  restoreEnumerator(
    ctx: SplitEnumeratorContext<CsvSplit>,
    state: SplitQueueState<CsvSplit>,
  ): SplitQueueEnumerator<CsvSplit> {
    return new SplitQueueEnumerator(ctx, splitsOfState<CsvSplit>(this.sourceName, state), totalOfState(state));
  }

  createReader(): SourceReader<T, CsvSplit> {
    return { read: (split) => this.read(split) as AsyncGenerator<T[]> };
  }

  private async splitsOf(f: InputFile): Promise<CsvSplit[]> {
    if (f.size === 0) return [];
    let start = 0;
    let line = 1;
    let names: string[] | undefined;
    if (this.options.header) {
      const h = await readFirstRecord(f.path, this.dialect);
      if (!h) return [];
      start = h.end;
      line = h.lines + 1;
      if (!this.columns) names = h.record.fields.map((n, i) => n ?? `column${i + 1}`);
    }
    const cuts =
      f.size - start > this.splitSizeBytes
        ? await recordBoundaries(f.path, this.dialect.quote, start, this.splitSizeBytes)
        : [];
    const bounds = [{ at: start, line }, ...cuts.filter((c) => c.at > start && c.at < f.size), { at: f.size, line: 0 }];
    const splits: CsvSplit[] = [];
    for (let i = 0; i + 1 < bounds.length; i++) {
      const s = bounds[i]!;
      const e = bounds[i + 1]!;
      if (e.at <= s.at) continue;
      splits.push({
        id: `${f.path}:${s.at}-${e.at}`,
        path: f.path,
        start: s.at,
        end: e.at,
        line: s.line,
        ...(names ? { names } : {}),
      });
    }
    return splits;
  }

  private async *read(split: CsvSplit): AsyncGenerator<unknown[]> {
    const delayMs = this.options.recordDelayMs ?? 0;
    if (delayMs <= 0) {
      yield* this.readRecords(split);
      return;
    }
    for await (const batch of this.readRecords(split)) {
      await sleep(delayMs);
      yield batch;
    }
  }

  private async *readRecords(split: CsvSplit): AsyncGenerator<unknown[]> {
    const columns = this.columns;
    const names = split.names;
    const parser = new CsvRecordParser(this.dialect, split.line, () => split.path);
    const toRow = (r: RawRecord): unknown => {
      if (columns) return typedRow(r, columns, split.path);
      if (!names) return r.fields.map((f) => f ?? '');
      const row: { [name: string]: string } = {};
      names.forEach((n, i) => (row[n] = r.fields[i] ?? ''));
      return row;
    };
    if (split.end <= split.start) return;
    const stream = createReadStream(split.path, {
      start: split.start,
      end: split.end - 1,
      highWaterMark: DEFAULT_TEXT_READ_BUFFER_BYTES,
    });
    const decoder = new StringDecoder('utf8');
    let records: RawRecord[] = [];
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        parser.push(decoder.write(chunk), records);
        while (records.length >= this.batchSize) {
          yield records.splice(0, this.batchSize).map(toRow);
        }
      }
      parser.push(decoder.end(), records);
      parser.end(records);
      for (let i = 0; i < records.length; i += this.batchSize) yield records.slice(i, i + this.batchSize).map(toRow);
      records = [];
    } finally {
      stream.destroy();
    }
  }
}

/** The header record and the offset after it, or nothing for a file without records. */
async function readFirstRecord(
  path: string,
  dialect: { delimiter: string; quote: string },
): Promise<{ record: RawRecord; end: number; lines: number } | undefined> {
  const q = dialect.quote.charCodeAt(0);
  const seen: Buffer[] = [];
  let pos = 0;
  let quoted = false;
  let lines = 0;
  const parse = (end: number): RawRecord | undefined => {
    const out: RawRecord[] = [];
    const parser = new CsvRecordParser(dialect, 1, () => path);
    parser.push(Buffer.concat(seen).toString('utf8', 0, end), out);
    parser.end(out);
    return out[0];
  };
  const stream = createReadStream(path, { highWaterMark: 64 * 1024 });
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      seen.push(chunk);
      for (let i = 0; i < chunk.length; i++) {
        const c = chunk[i]!;
        if (c === q) quoted = !quoted;
        else if (c === 0x0a) {
          lines++;
          // Blank lines before the header are no record: keep going until one is complete.
          const record = quoted ? undefined : parse(pos + i + 1);
          if (record) return { record, end: pos + i + 1, lines };
        }
      }
      pos += chunk.length;
    }
  } finally {
    stream.destroy();
  }
  const record = parse(pos);
  return record ? { record, end: pos, lines } : undefined;
}

/**
 * For each nominal cut k * size after `from`, the first offset after a newline outside quotes at
 * or after it, with its line number. One sequential pass over the file.
 */
export async function recordBoundaries(
  path: string,
  quote: string,
  from: number,
  size: number,
): Promise<{ at: number; line: number }[]> {
  const q = quote.charCodeAt(0);
  const cuts: { at: number; line: number }[] = [];
  let next = from + size; // the nominal cut we are looking for a boundary for
  let quoted = false;
  let line = 1;
  let pos = 0;
  for await (const chunk of createReadStream(path, { highWaterMark: 1024 * 1024 }) as AsyncIterable<Buffer>) {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (c === q) quoted = !quoted;
      else if (c === 0x0a) {
        line++;
        const at = pos + i + 1;
        if (!quoted && at >= next && at > from) {
          cuts.push({ at, line });
          while (next <= at) next += size;
        }
      }
    }
    pos += chunk.length;
  }
  return cuts;
}

function positiveInt(n: number, what: string): number {
  if (!Number.isSafeInteger(n) || n <= 0) throw jobInvalid(`readCsv: ${what} must be a positive integer, got ${n}`);
  return n;
}
