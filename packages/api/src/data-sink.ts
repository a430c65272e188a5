import { checkName } from './dataset-checks.js';
import { jobInvalid } from './errors.js';
import { csvField } from './sources/csv-format.js';
import type { SinkTransformation } from './transformations.js';
import { checkParallelism, type Mutable } from './transformation-registry.js';

/** The end of a job's plan: a sink operator, which may still be renamed or re-parallelized. */
export class DataSink {
  constructor(private readonly transformation: Mutable<SinkTransformation>) {}

  get id(): string {
    return this.transformation.id;
  }

  get path(): string {
    return this.transformation.path;
  }

  name(name: string): this {
    this.transformation.name = checkName(name);
    return this;
  }

  setParallelism(parallelism: number): this {
    this.transformation.parallelism = checkParallelism(parallelism, `setParallelism on '${this.transformation.name}'`);
    return this;
  }
}

/** writeAsCsv's options: which fields, whether a header line, the delimiter. */
export interface CsvSinkOptions {
  readonly columns?: readonly string[];
  readonly header?: boolean;
  readonly delimiter?: string;
}

/** writeAsCsv's record-to-line function and header line, from its checked options. */
export function csvSinkFormat(options: CsvSinkOptions): { format: (r: unknown) => string; header?: string } {
  const d = options.delimiter ?? ',';
  if (typeof d !== 'string' || d.length !== 1 || d === '"' || d === '\n')
    throw jobInvalid(`writeAsCsv: delimiter must be one character other than '"' and a newline`);
  const columns = options.columns;
  if (columns !== undefined && (!Array.isArray(columns) || !columns.every((c) => typeof c === 'string'))) {
    throw jobInvalid('writeAsCsv: columns must be an array of field names');
  }
  const header = options.header ?? columns !== undefined;
  if (header && columns === undefined) throw jobInvalid('writeAsCsv: a header needs columns');
  const format = (r: unknown): string => {
    const values = columns
      ? columns.map((c) => (r as { [k: string]: unknown } | null)?.[c])
      : Array.isArray(r)
        ? r
        : typeof r === 'object' && r !== null
          ? Object.values(r)
          : [r];
    return values.map((v) => csvField(v, d)).join(d);
  };
  return header ? { format, header: columns!.map((c) => csvField(c, d)).join(d) } : { format };
}
