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
  LocalFileSink,
  type BlockSink,
  type FinishedPartition,
  type SubpartitionBlocks,
  type WrittenPartition,
} from './block-sink.js';
export { ResultPartitionWriter, type ResultPartitionWriterOptions, type WriterHost } from './writer.js';
export { parseIndexFile } from './index-file.js';
export type { SubpartitionReadOptions } from './reader.js';
export {
  PartitionStore,
  DEFAULT_BLOCK_SIZE,
  DEFAULT_MAX_QUEUED_BLOCKS,
  type PartitionStoreOptions,
  type PartitionStoreMetrics,
  type PartitionStoreStats,
} from './store.js';
export {
  createPartitionServiceHandlers,
  newPartitionServerMetrics,
  type PartitionServerMetrics,
  type PartitionServiceOptions,
} from './service.js';
export { readRemoteSubpartitions, readLocalSubpartitions, type ReadSubpartitionsOptions } from './client.js';
export { PartitionClientPool, ShuffleWorkerClientPool, type PartitionClientPoolOptions } from './client-pool.js';
export {
  createRemotePartitionWriter,
  DEFAULT_MESSAGE_BYTES,
  DEFAULT_MAX_UNSENT_BYTES,
  type RemotePartitionWriterOptions,
  type RemotePartition,
  type ShuffleWorkerAck,
  type ShuffleWorkerTarget,
  ShuffleWorkerUnreachableError,
  unreachableShuffleWorkers,
} from './remote-sink.js';
export {
  createShuffleIngestHandler,
  newShuffleIngestMetrics,
  type ShuffleIngestMetrics,
  type ShuffleIngestOptions,
} from './ingest.js';
