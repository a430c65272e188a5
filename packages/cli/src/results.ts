import { csvField } from '@rebound/api';
import type { ClusterClient } from './client.js';
import { UsageError } from './errors.js';
import type { TextOutput } from './progress.js';
import { displayWidth } from './width.js';

/** How `submit` and `results` print a collect() result. */
export const OUTPUT_FORMATS = ['table', 'csv', 'jsonl', 'json'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** table for a terminal (or unless told), jsonl when piped (lossless, one row a line). */
export function outputFormatFor(given: string | undefined, stdout: TextOutput): OutputFormat {
  if (given === undefined) return stdout.isTTY ? 'table' : 'jsonl';
  if (!(OUTPUT_FORMATS as readonly string[]).includes(given)) {
    // The message names its own fix: no "(see --help)".
    throw new UsageError(`--output-format ${given}: expected one of ${OUTPUT_FORMATS.join(', ')}`, false);
  }
  return given as OutputFormat;
}

/**
 * The columns of a result: the union of plain objects' fields in the order they first appear,
 * f0, f1, … for tuples (Flink's names), or one `value` column when rows are neither.
 */
export function columnsOf(rows: readonly unknown[]): { names: string[]; cells: (row: unknown) => unknown[] } {
  const isObject = (r: unknown): r is { [k: string]: unknown } =>
    typeof r === 'object' && r !== null && !Array.isArray(r);
  if (rows.length > 0 && rows.every(isObject)) {
    const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
    return { names, cells: (r) => names.map((n) => (r as { [k: string]: unknown })[n] ?? null) };
  }
  if (rows.length > 0 && rows.every(Array.isArray)) {
    const width = Math.max(...rows.map((r) => (r as unknown[]).length));
    const names = Array.from({ length: width }, (_, i) => `f${i}`);
    return { names, cells: (r) => names.map((_, i) => (r as unknown[])[i] ?? null) };
  }
  return { names: ['value'], cells: (r) => [r] };
}

function cellText(v: unknown): string {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'string') return v.replace(/[\r\n\t]/g, ' ');
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return JSON.stringify(v);
}

/** A boxed table (as Flink's SQL client prints one): numbers right-aligned, NULL for null. */
export function renderTable(rows: readonly unknown[]): string[] {
  const { names, cells } = columnsOf(rows);
  const grid = rows.map((r) => cells(r));
  const text = grid.map((row) => row.map(cellText));
  const widths = names.map((n, i) => Math.max(displayWidth(n), ...text.map((row) => displayWidth(row[i]!))));
  const pad = (s: string, w: number, right: boolean): string => {
    const fill = ' '.repeat(Math.max(0, w - displayWidth(s)));
    return right ? fill + s : s + fill;
  };
  const rule = `+${widths.map((w) => '-'.repeat(w + 2)).join('+')}+`;
  const line = (values: readonly string[], right: (i: number) => boolean): string =>
    `| ${values.map((v, i) => pad(v, widths[i]!, right(i))).join(' | ')} |`;
  return [
    rule,
    line(names, () => false),
    rule,
    ...text.map((row, r) => line(row, (i) => typeof grid[r]![i] === 'number')),
    rule,
    `${rows.length} row${rows.length === 1 ? '' : 's'}`,
  ];
}

/** RFC 4180 with a header line; null as an empty field, nested values as JSON. */
export function renderCsv(rows: readonly unknown[]): string[] {
  const { names, cells } = columnsOf(rows);
  const field = (v: unknown): string => csvField(typeof v === 'object' && v !== null ? JSON.stringify(v) : v);
  return [names.map((n) => csvField(n)).join(','), ...rows.map((r) => cells(r).map(field).join(','))];
}

/**
 * One JSON array of the rows, one row a line (valid JSON for 0 rows too: `[]`). Each row is the
 * sink's own JSON line, so values print exactly as jsonl prints them.
 */
export function renderJson(rowLines: readonly string[]): string[] {
  if (rowLines.length === 0) return ['[]'];
  return ['[', ...rowLines.map((l, i) => (i < rowLines.length - 1 ? `${l},` : l)), ']'];
}

/**
 * Streams a job's collect() result to `out` in `format`. jsonl passes the lines through as they
 * arrive; table, csv and json need every row first (the result is bounded by
 * collect-sink.max-rows and max-bytes).
 */
export async function printJobResult(
  client: ClusterClient,
  jobId: string,
  format: OutputFormat,
  out: TextOutput,
  opts: { readonly streamTimeoutMs: number; readonly maxChunkBytes?: number },
): Promise<number> {
  const rows: unknown[] = [];
  const rowLines: string[] = [];
  let count = 0;
  await client.fetchJobResult(
    jobId,
    (data) => {
      if (format === 'jsonl') {
        out.write(data.toString('utf8'));
        count += data.reduce((n, b) => n + (b === 10 ? 1 : 0), 0);
        return;
      }
      for (const line of data.toString('utf8').split('\n')) {
        if (line === '') continue;
        if (format === 'json') rowLines.push(line);
        else rows.push(JSON.parse(line));
      }
    },
    opts,
  );
  if (format === 'jsonl') return count;
  if (format === 'json') {
    out.write(`${renderJson(rowLines).join('\n')}\n`);
    return rowLines.length;
  }
  const lines = format === 'table' ? renderTable(rows) : renderCsv(rows);
  out.write(`${lines.join('\n')}\n`);
  return rows.length;
}
