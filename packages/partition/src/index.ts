export { encodeRecords, decodeRecords, encodeRecord, RecordCodecError } from './codec.js';
export {
  BLOCK_HEADER_BYTES,
  PartitionCorruptError,
  partitionDir,
  partitionsRoot,
  type PartitionIdLike,
  type NormalizedPartitionId,
  type PartitionIndexFile,
} from './format.js';
export {
  ResultPartitionWriter,
  type FinishedPartition,
  type SubpartitionBlocks,
  type ResultPartitionWriterOptions,
} from './writer.js';
export type { SubpartitionReadOptions } from './reader.js';
export {
  PartitionStore,
  DEFAULT_BLOCK_SIZE,
  DEFAULT_MAX_QUEUED_BLOCKS,
  type PartitionStoreOptions,
  type PartitionStoreMetrics,
} from './store.js';
export {
  createPartitionServiceHandlers,
  newPartitionServerMetrics,
  type PartitionServerMetrics,
  type PartitionServiceOptions,
} from './service.js';
export {
  readRemoteSubpartitions,
  readLocalSubpartitions,
  PartitionClientPool,
  type ReadSubpartitionsOptions,
  type PartitionClientPoolOptions,
} from './client.js';
