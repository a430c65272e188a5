export { HaPaths, assertHaDirInitialized } from './ha-dir.js';
export { type LeaderInfo, readLeader, readCurrentEpoch, readMaxAllocatedEpoch, allocateEpoch, formatEpoch } from './leader-info.js';
export type {
  HighAvailabilityServices,
  JobGraphStore,
  LeaderContender,
  LeaderElection,
  LeaderElectionOptions,
  LeaderRetrieval,
  LeaderRetrievalListener,
} from './ha-services.js';
export { createHaServices } from './ha-services-factory.js';
export { FileHaServices } from './file-ha-services.js';
export { EtcdHaServices } from './etcd/etcd-ha-services.js';
export { EtcdUnavailableError } from './etcd/etcd-connection.js';
export { LeaderElectionService, type LeaderElectionServiceOptions, type LeaseOwner } from './leader-election-service.js';
export { LeaderRetrievalService, type LeaderRetrievalServiceOptions } from './leader-retrieval-service.js';
export {
  FileJobGraphStore,
  type StoredJob,
  type StoredJobSummary,
  type TerminalJobStatus,
  JOB_EVENTS_DIR,
  JOB_GRAPH_FILE,
  JOB_MODULE_FILE,
  JOB_STATUS_FILE,
} from './job-graph-store.js';
export { EpochFence, UnconfirmedEpochError, type LeaderEpochSource } from './epoch-fence.js';
export { type ProcessEndpoint, type ProcessEndpointInput, type EndpointRegistry, ENDPOINTS_DIR, FileEndpointRegistry } from './endpoints.js';
