export { HaPaths, assertHaDirInitialized } from './ha-dir.js';
export { type LeaderInfo, readLeader, readCurrentEpoch, readMaxAllocatedEpoch, allocateEpoch, formatEpoch } from './leader-info.js';
export {
  LeaderElectionService,
  type LeaderContender,
  type LeaderElectionServiceOptions,
  type LeaseOwner,
} from './leader-election-service.js';
export { LeaderRetrievalService, type LeaderRetrievalListener, type LeaderRetrievalServiceOptions } from './leader-retrieval-service.js';
export {
  JobGraphStore,
  type StoredJob,
  type StoredJobSummary,
  type TerminalJobStatus,
  JOB_EVENTS_DIR,
  JOB_GRAPH_FILE,
  JOB_MODULE_FILE,
  JOB_STATUS_FILE,
} from './job-graph-store.js';
export { EpochFence, UnconfirmedEpochError, type LeaderEpochSource } from './epoch-fence.js';
export { type ProcessEndpoint, ENDPOINTS_DIR, publishEndpoint, withdrawEndpoint, listEndpoints, readEndpoint, endpointAlive } from './endpoints.js';
