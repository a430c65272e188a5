import { checkFunction, checkName, defaultFormat } from './dataset-checks.js';
import { DataSink, csvSinkFormat } from './data-sink.js';
import { jobInvalid } from './errors.js';
import type { Record as AnyRecord, SinkTransformation } from './transformations.js';
import {
  checkParallelism,
  type Mutable,
  type MutableTransformation,
  type TransformationRegistry,
} from './transformation-registry.js';

/**
 * The part of a DataSet that makes no new dataset: the operator that produces it (id, name,
 * parallelism) and the sinks its records can go to. The operators that make new datasets stay
 * in dataset.ts with KeyedDataSet, JoinBuilder and the rest: their signatures and DataSet's refer
 * to each other, and modules must not import each other in a cycle.
 */
export class OperatorOutput<T> {
  /** Not for users: datasets come from ExecutionEnvironment and other datasets. */
  constructor(
    protected readonly env: TransformationRegistry,
    protected readonly transformation: MutableTransformation,
  ) {}

  /** The id of the operator producing this dataset (`op-<n>`). */
  get id(): string {
    return this.transformation.id;
  }

  /**
   * Writes one line per record into directory `path` (each subtask's lines become one committed
   * file). Default format: strings as they are, anything else as JSON.
   */
  writeAsText(path: string, format?: (record: T) => string): DataSink {
    if (format !== undefined) checkFunction(format, 'writeAsText(path, format)');
    return this.sink('writeAsText', 'Sink: TextFiles', path, format ?? defaultFormat);
  }

  /** One JSON value per line, with the exactly-once commit of writeAsText. */
  writeAsJsonLines(path: string): DataSink {
    return this.sink('writeAsJsonLines', 'Sink: JsonLines', path, (r) => JSON.stringify(r) ?? 'null');
  }

  /**
   * One CSV record per record (RFC 4180 quoting; null as an empty field, '' as `""`), with the
   * exactly-once commit of writeAsText. `columns` picks and orders the fields of object records
   * and is the header of every file (`header`, default true when columns are given). Without
   * columns: arrays element by element, objects by their own property order.
   */
  writeAsCsv(
    path: string,
    options: { readonly columns?: readonly string[]; readonly header?: boolean; readonly delimiter?: string } = {},
  ): DataSink {
    const { format, header } = csvSinkFormat(options);
    return this.sink('writeAsCsv', 'Sink: Csv', path, format, header);
  }

  /**
   * The records back to the client: `rebound submit` prints them once the job finished
   * (`rebound results JOB` later), `runLocally` returns them under COLLECT_SINK_KEY. The result
   * is committed like any sink (exactly once through failovers) into the job's directory in
   * storageDir and then streamed from the leader, so it is bounded: `collect-sink.max-bytes` and
   * `collect-sink.max-rows` fail the job when exceeded. One collect() per job.
   */
  collect(): DataSink {
    const t = this.env.addTransformation(
      {
        kind: 'sink',
        name: 'Sink: Collect',
        input: this.id,
        path: '',
        format: (r) => JSON.stringify(r) ?? 'null',
        collect: true,
      },
      this.transformation,
    );
    return new DataSink(t as Mutable<SinkTransformation>);
  }

  private sink(what: string, name: string, path: string, format: (r: T) => string, header?: string): DataSink {
    if (typeof path !== 'string' || path === '') throw jobInvalid(`${what}(path): path must be a non-empty string`);
    const t = this.env.addTransformation(
      {
        kind: 'sink',
        name,
        input: this.id,
        path: this.env.resolvePath(path),
        format: format as (r: AnyRecord) => string,
        ...(header !== undefined ? { header } : {}),
      },
      this.transformation,
    );
    return new DataSink(t as Mutable<SinkTransformation>);
  }

  name(name: string): this {
    this.transformation.name = checkName(name);
    return this;
  }

  setParallelism(parallelism: number): this {
    this.transformation.parallelism = checkParallelism(parallelism, `setParallelism on '${this.transformation.name}'`);
    return this;
  }

  /** Not for users: the producing operator. */
  get producer(): MutableTransformation {
    return this.transformation;
  }
}
