import { isAbsolute, resolve } from 'node:path';
import { jobInvalid } from './errors.js';
import { DataSet } from './dataset.js';
import type { Source, SourceSplit } from './source.js';
import { rowGeneratorSource, sequenceSource, type GeneratorOptions } from './sources/generator-sources.js';
import { TextFileSource, type TextFileSourceOptions } from './sources/text-file-source.js';
import { CsvSource, type CsvRow, type CsvSourceOptions } from './sources/csv-source.js';
import { JsonLinesSource } from './sources/json-lines-source.js';
import { collectionSource } from './sources/collection-source.js';
import type { Record as AnyRecord, Transformation } from './transformations.js';
import {
  checkParallelism,
  type MutableTransformation,
  type NewTransformation,
  type TransformationRegistry,
} from './transformation-registry.js';

export interface SourceOptions {
  /** Parallelism of the source vertex (default: config, else the number of splits, at most 128). */
  readonly parallelism?: number;
}

export interface EnvironmentOptions {
  /** Relative input and output paths are resolved against this directory (default: process.cwd()). */
  readonly cwd?: string;
}

function isSource(s: unknown): s is Source<unknown, SourceSplit, unknown> {
  const v = s as Partial<Source<unknown>> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.sourceName === 'string' &&
    typeof v.supportsBatchSnapshot === 'boolean' &&
    typeof v.createEnumerator === 'function' &&
    typeof v.restoreEnumerator === 'function' &&
    typeof v.createReader === 'function'
  );
}

/**
 * What a job's build function receives. It records Transformations with ids `op-1`, `op-2`, ... in
 * call order, so building the same module with the same arguments in any process gives the same
 * ids.
 */
export class ExecutionEnvironment implements TransformationRegistry {
  private readonly list: MutableTransformation[] = [];
  /** Producer id → id of the operator consuming it. */
  private readonly consumers = new Map<string, string>();
  private readonly cwd: string;
  private sealed = false;

  constructor(options: EnvironmentOptions = {}) {
    this.cwd = options.cwd ?? process.cwd();
  }

  fromSource<T, Split extends SourceSplit, State>(
    source: Source<T, Split, State>,
    name?: string,
    options: SourceOptions = {},
  ): DataSet<T> {
    if (!isSource(source)) {
      throw jobInvalid(
        'fromSource(source): not a Source (needs sourceName, supportsBatchSnapshot, createEnumerator, restoreEnumerator, createReader)',
      );
    }
    const t = this.addTransformation({
      kind: 'source',
      name: name ?? `Source: ${source.sourceName}`,
      source: source as unknown as Source<AnyRecord, SourceSplit, unknown>,
      ...(options.parallelism !== undefined
        ? { parallelism: checkParallelism(options.parallelism, 'fromSource') }
        : {}),
    });
    return new DataSet<T>(this, t);
  }

  /** One record per line of the file, or of each file in the directory (see TextFileSource). */
  readTextFiles(pathOrDir: string, options: TextFileSourceOptions & SourceOptions = {}): DataSet<string> {
    if (typeof pathOrDir !== 'string' || pathOrDir === '')
      throw jobInvalid('readTextFiles(path): path must be a non-empty string');
    const { parallelism, ...rest } = options;
    return this.fromSource(new TextFileSource(this.resolvePath(pathOrDir), rest), undefined, { parallelism });
  }

  /**
   * Rows of a CSV file, or of each file in a directory (RFC 4180; see CsvSource for how byte-range
   * splits find record boundaries). With `columns`, rows are typed objects; the type parameter
   * names their shape.
   */
  readCsv<T = CsvRow>(pathOrDir: string, options: CsvSourceOptions & SourceOptions = {}): DataSet<T> {
    if (typeof pathOrDir !== 'string' || pathOrDir === '')
      throw jobInvalid('readCsv(path): path must be a non-empty string');
    const { parallelism, ...rest } = options;
    return this.fromSource(new CsvSource<T>(this.resolvePath(pathOrDir), rest), undefined, { parallelism });
  }

  /** One JSON value per line of the file, or of each file in the directory. */
  readJsonLines<T = unknown>(
    pathOrDir: string,
    options: Omit<TextFileSourceOptions, 'recordDelayMs'> & SourceOptions = {},
  ): DataSet<T> {
    if (typeof pathOrDir !== 'string' || pathOrDir === '')
      throw jobInvalid('readJsonLines(path): path must be a non-empty string');
    const { parallelism, ...rest } = options;
    return this.fromSource(new JsonLinesSource<T>(this.resolvePath(pathOrDir), rest), undefined, { parallelism });
  }

  /** A small input shipped with the job: the elements of `elements`, which must be JSON values. */
  fromCollection<T>(elements: readonly T[], options: GeneratorOptions & SourceOptions = {}): DataSet<T> {
    const { parallelism, ...rest } = options;
    return this.fromSource(collectionSource(elements, rest), undefined, { parallelism });
  }

  /** `fromCollection([...elements])`. */
  fromElements<T>(...elements: T[]): DataSet<T> {
    return this.fromCollection(elements);
  }

  /** The numbers from..to, both inclusive. */
  generateSequence(from: number, to: number, options: GeneratorOptions & SourceOptions = {}): DataSet<number> {
    const { parallelism, ...rest } = options;
    return this.fromSource(sequenceSource(from, to, rest), undefined, { parallelism });
  }

  /** Rows fn(0) .. fn(count - 1); `fn` must be pure (splits are re-read after failures). */
  generateRows<T>(count: number, fn: (i: number) => T, options: GeneratorOptions & SourceOptions = {}): DataSet<T> {
    const { parallelism, ...rest } = options;
    return this.fromSource(rowGeneratorSource(count, fn, rest), undefined, { parallelism });
  }

  /** Transformations in construction order. */
  transformations(): readonly Transformation[] {
    return this.list;
  }

  resolvePath(p: string): string {
    return isAbsolute(p) ? p : resolve(this.cwd, p);
  }

  /** Not for users: registers an operator that consumes `inputs`. */
  addTransformation(t: NewTransformation, ...inputs: MutableTransformation[]): MutableTransformation {
    if (this.sealed) {
      throw jobInvalid(
        'the job is already built: operators must be defined while build() runs (await async work inside it)',
      );
    }
    const id = `op-${this.list.length + 1}`;
    for (const input of inputs) {
      const first = this.consumers.get(input.id);
      if (first !== undefined) {
        throw jobInvalid(
          `operator '${input.name}' (${input.id}) is consumed twice (by ${first} and by '${t.name}' ${id}); ` +
            'a dataset can feed only one operator: create the source twice',
        );
      }
    }
    for (const input of inputs) this.consumers.set(input.id, `'${t.name}' ${id}`);
    const full = { ...t, id } as MutableTransformation;
    this.list.push(full);
    return full;
  }

  /** Not for users: ends the definition phase. */
  seal(): void {
    this.sealed = true;
  }
}
