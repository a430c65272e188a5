import { jobInvalid, userCodeError } from '../errors.js';

/**
 * RFC 4180 CSV: records end at `\n` (or `\r\n`) outside quotes; a field is quoted when it starts
 * with the quote character, and a quote inside it is doubled. A quote anywhere else is an error,
 * which is what keeps the split rule of CsvSource sound (see csv-source.ts).
 */

export type CsvType = 'string' | 'number' | 'boolean';
export type CsvColumnType = CsvType | `${CsvType}?`;

export interface CsvColumn {
  readonly name: string;
  readonly type?: CsvType;
  /** An empty unquoted field is null (default false: '' for strings, an error otherwise). */
  readonly nullable?: boolean;
}

/** Columns in order: specs, or an object `{ name: 'number', note: 'string?' }` (`?`: nullable). */
export type CsvColumns = readonly (CsvColumn | string)[] | { readonly [name: string]: CsvColumnType };

export interface CsvOptions {
  /** The first record of each file names the columns and is not data (default false). */
  readonly header?: boolean;
  /** One ASCII character (default ','). */
  readonly delimiter?: string;
  /** One ASCII character (default '"'). */
  readonly quote?: string;
  /**
   * Typed columns; records are then objects by column name. Without them, a file with a header
   * gives objects of strings, one without gives string arrays.
   */
  readonly columns?: CsvColumns;
}

export interface ResolvedColumn {
  readonly name: string;
  readonly type: CsvType;
  readonly nullable: boolean;
}

function singleAscii(c: string | undefined, fallback: string, what: string): string {
  const v = c ?? fallback;
  if (typeof v !== 'string' || v.length !== 1 || v.charCodeAt(0) > 0x7f || v === '\n' || v === '\r') {
    throw jobInvalid(`readCsv: ${what} must be one ASCII character other than a line break, got ${JSON.stringify(c)}`);
  }
  return v;
}

export function resolveDialect(options: CsvOptions): { delimiter: string; quote: string } {
  const delimiter = singleAscii(options.delimiter, ',', 'delimiter');
  const quote = singleAscii(options.quote, '"', 'quote');
  if (delimiter === quote) throw jobInvalid('readCsv: delimiter and quote must differ');
  return { delimiter, quote };
}

const TYPES: readonly string[] = ['string', 'number', 'boolean'];

export function resolveColumns(columns: CsvColumns | undefined): ResolvedColumn[] | undefined {
  if (columns === undefined) return undefined;
  const list: ResolvedColumn[] = [];
  const add = (name: unknown, type: unknown, nullable: boolean): void => {
    if (typeof name !== 'string' || name === '') throw jobInvalid('readCsv: every column needs a non-empty name');
    if (!TYPES.includes(type as string)) {
      throw jobInvalid(`readCsv: column '${name}' has type ${JSON.stringify(type)}; use string, number or boolean`);
    }
    if (list.some((c) => c.name === name)) throw jobInvalid(`readCsv: column '${name}' is declared twice`);
    list.push({ name, type: type as CsvType, nullable });
  };
  if (Array.isArray(columns)) {
    for (const c of columns as readonly (CsvColumn | string)[]) {
      if (typeof c === 'string') add(c, 'string', false);
      else add(c?.name, c?.type ?? 'string', c?.nullable === true);
    }
  } else if (typeof columns === 'object' && columns !== null) {
    for (const [name, t] of Object.entries(columns as { [name: string]: string })) {
      const nullable = typeof t === 'string' && t.endsWith('?');
      add(name, nullable ? t.slice(0, -1) : t, nullable);
    }
  } else {
    throw jobInvalid('readCsv: columns must be an array of column specs or an object of name → type');
  }
  if (list.length === 0) throw jobInvalid('readCsv: columns must name at least one column');
  return list;
}

/** A parsed field: its text, or null for an empty field that was not quoted. */
export type RawField = string | null;

export interface RawRecord {
  readonly fields: RawField[];
  /** 1-based line of the file the record starts on. */
  readonly line: number;
}

const NL = 10;
const CR = 13;

/**
 * Incremental RFC 4180 parser: `push` text chunks (any cut, even inside a field), get the
 * complete records back. A file's last record needs no final newline (`end`).
 */
export class CsvRecordParser {
  private readonly d: number;
  private readonly q: number;
  private fields: RawField[] = [];
  private field = '';
  private quoted = false;
  /** 0: at field start, 1: in unquoted field, 2: in quoted field, 3: quote seen in quoted field. */
  private state = 0;
  private line: number;
  private recordLine: number;

  constructor(
    dialect: { delimiter: string; quote: string },
    firstLine: number,
    private readonly where: () => string,
  ) {
    this.d = dialect.delimiter.charCodeAt(0);
    this.q = dialect.quote.charCodeAt(0);
    this.line = firstLine;
    this.recordLine = firstLine;
  }

  push(text: string, out: RawRecord[]): void {
    const { d, q } = this;
    let start = 0; // start of the pending run of field characters in `text`
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.state === 2) {
        if (c === q) {
          this.field += text.slice(start, i);
          this.state = 3;
          start = i + 1;
        } else if (c === NL) {
          this.line++;
        }
      } else if (this.state === 3) {
        if (c === q) {
          this.field += text[i]; // a doubled quote
          this.state = 2;
        } else if (c === d) {
          this.endField();
        } else if (c === NL) {
          this.endRecord(out);
        } else if (c !== CR) {
          // (a CR after the closing quote is the first half of a `\r\n` line end)
          throw this.error('characters after the closing quote of a field');
        }
        start = i + 1;
      } else if (c === d) {
        this.field += text.slice(start, i);
        this.endField();
        start = i + 1;
      } else if (c === NL) {
        this.field += text.slice(start, i);
        this.endRecord(out);
        start = i + 1;
      } else if (c === q) {
        if (this.state === 1) {
          throw this.error('a quote inside an unquoted field (quote the whole field and double the quote inside)');
        }
        this.state = 2;
        this.quoted = true;
        start = i + 1;
      } else {
        this.state = 1;
      }
    }
    if (start < text.length) this.field += text.slice(start);
  }

  /** End of input: the last record when it had no final newline. */
  end(out: RawRecord[]): void {
    if (this.state === 2) throw this.error(`a quoted field opened on line ${this.recordLine} is never closed`);
    if (this.state !== 0 || this.fields.length > 0 || this.field !== '' || this.quoted) this.endRecord(out);
  }

  private endField(): void {
    let f = this.field;
    // `\r\n` line ends: the CR before the newline is not data (only outside quotes).
    if (!this.quoted && f.length > 0 && f.charCodeAt(f.length - 1) === CR) f = f.slice(0, -1);
    this.fields.push(!this.quoted && f === '' ? null : f);
    this.field = '';
    this.quoted = false;
    this.state = 0;
  }

  private endRecord(out: RawRecord[]): void {
    this.endField();
    const fields = this.fields;
    this.fields = [];
    const line = this.recordLine;
    this.line++;
    this.recordLine = this.line;
    // A blank line is no record (DuckDB and most readers skip them too).
    if (fields.length === 1 && fields[0] === null) return;
    out.push({ fields, line });
  }

  private error(what: string): Error {
    return userCodeError(`${this.where()}, line ${this.line}, column ${this.fields.length + 1}: ${what}`);
  }
}

const NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** Converts raw records to typed rows, with errors naming file, line and column. */
export function typedRow(
  rec: RawRecord,
  columns: readonly ResolvedColumn[],
  file: string,
): { [name: string]: string | number | boolean | null } {
  const { fields, line } = rec;
  if (fields.length !== columns.length) {
    const col = Math.min(fields.length, columns.length) + 1;
    throw userCodeError(
      `${file}, line ${line}, column ${col}: expected ${columns.length} fields (${columns.map((c) => c.name).join(', ')}), got ${fields.length}`,
    );
  }
  const row: { [name: string]: string | number | boolean | null } = {};
  for (let i = 0; i < columns.length; i++) {
    const c = columns[i]!;
    const raw = fields[i]!;
    const fail = (what: string): never => {
      throw userCodeError(`${file}, line ${line}, column ${i + 1} (${c.name}): ${what}`);
    };
    if (raw === null) {
      if (c.nullable) row[c.name] = null;
      else if (c.type === 'string') row[c.name] = '';
      else fail(`empty ${c.type} in a column that is not nullable`);
      continue;
    }
    switch (c.type) {
      case 'string':
        row[c.name] = raw;
        break;
      case 'number':
        if (!NUMBER.test(raw)) fail(`${JSON.stringify(raw)} is not a number`);
        row[c.name] = Number(raw);
        break;
      case 'boolean': {
        const b = raw.toLowerCase();
        if (b === 'true') row[c.name] = true;
        else if (b === 'false') row[c.name] = false;
        else fail(`${JSON.stringify(raw)} is not a boolean (true or false)`);
        break;
      }
    }
  }
  return row;
}

/** One field of an output record: quoted when it holds the delimiter, a quote or a line break. */
export function csvField(v: unknown, delimiter = ',', quote = '"'): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (s === '' && typeof v === 'string') return quote + quote; // '' and null differ
  if (s.includes(delimiter) || s.includes(quote) || s.includes('\n') || s.includes('\r')) {
    return quote + s.split(quote).join(quote + quote) + quote;
  }
  return s;
}
