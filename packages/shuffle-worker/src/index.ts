export {
  startShuffleWorkerProcess,
  type ShuffleWorkerProcess,
  type ShuffleWorkerProcessOptions,
} from './shuffle-worker-process.js';
export { ShuffleWorker, type ShuffleWorkerParts } from './shuffle-worker.js';
export { JobReadCapabilities, capabilityFile } from './job-read-capabilities.js';
export { OrphanedPartitions } from './orphaned-partitions.js';
export {
  ShuffleMasterConnection,
  type ShuffleMasterConnectionHost,
  type ShuffleMasterConnectionOptions,
} from './shuffle-master-connection.js';
export {
  keepShuffleWorkerId,
  resolveShuffleWorkerId,
  WORKER_ID_FILE,
  type ShuffleWorkerIdentity,
} from './worker-identity.js';
