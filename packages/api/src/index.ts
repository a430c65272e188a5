// Side effect first: registers the error classes that bundled job modules share (errors.ts).
export { CORE_REGISTRY_KEY } from './errors.js';
export * from './source.js';
export type * from './coordinator.js';
export type * from './transformations.js';
export { defineJob, isJobDefinition, type JobDefinition } from './job.js';
export { ExecutionEnvironment, type EnvironmentOptions, type SourceOptions } from './environment.js';
export {
  DataSet,
  KeyedDataSet,
  JoinBuilder,
  GroupedDataSet,
  SortedDataSet,
  type AggregateResult,
  type JoinEqualTo,
  type JoinWhere,
} from './dataset.js';
export { DataSink } from './data-sink.js';
export { defaultFormat } from './dataset-checks.js';
export type { FieldOf } from './field-reducers.js';
export { buildJob, buildOperators, type BuildJobOptions, type BuiltJob } from './job-graph.js';
export { hashKey, subpartitionOf, groupingKey } from './hash.js';
export { bundleJobModule, type JobModuleBundle } from './module-bundle.js';
export { loadJobModule } from './module-loader.js';
export { SplitQueueEnumerator, splitsOfState, type SplitQueueState } from './sources/split-queue-enumerator.js';
export {
  TextFileSource,
  computeTextFileSplits,
  listInputFiles,
  readTextSplit,
  DEFAULT_TEXT_BATCH_SIZE,
  DEFAULT_TEXT_SPLIT_SIZE_BYTES,
  type InputFile,
  type TextFileSourceOptions,
  type TextFileSplit,
} from './sources/text-file-source.js';
export {
  RangeGeneratorSource,
  computeRangeSplits,
  rowGeneratorSource,
  sequenceSource,
  DEFAULT_GENERATOR_BATCH_SIZE,
  DEFAULT_GENERATOR_SPLIT_SIZE,
  type GeneratorOptions,
  type RangeSplit,
} from './sources/generator-sources.js';
export { LegacySequenceSource, legacySequenceSource } from './sources/legacy-sequence-source.js';
export {
  CsvSource,
  recordBoundaries,
  type CsvSplit,
  type CsvSourceOptions,
  type CsvRow,
} from './sources/csv-source.js';
export {
  CsvRecordParser,
  csvField,
  type CsvColumn,
  type CsvColumns,
  type CsvColumnType,
  type CsvOptions,
  type CsvType,
} from './sources/csv-format.js';
export { JsonLinesSource } from './sources/json-lines-source.js';
export { collectionSource } from './sources/collection-source.js';
export {
  sum,
  count,
  avg,
  min,
  max,
  compileAggregation,
  type AggregateFunction,
  type AggregateSpecs,
} from './aggregations.js';
export { compareKeys, mergeTopN, type Order } from './ordering.js';
