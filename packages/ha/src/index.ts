export { HaPaths, assertHaDirInitialized } from './file/ha-dir.js';
export {
  type LeaderInfo,
  readLeader,
  readCurrentEpoch,
  readMaxAllocatedEpoch,
  allocateEpoch,
  formatEpoch,
} from './leader-info.js';
export type {
  HighAvailabilityServices,
  JobGraphStore,
  LeaderContender,
  LeaderElection,
  LeaderElectionOptions,
  LeaderRetrieval,
  LeaderRetrievalListener,
  LeaderStoreOptions,
} from './ha-services.js';
export { RetryingJobRecordDriver, type HaRetryPolicy } from './retrying-job-record-driver.js';
export { createHaServices } from './ha-services-factory.js';
export { FileHaServices } from './file/file-ha-services.js';
export { EtcdHaServices } from './etcd/etcd-ha-services.js';
export { EtcdUnavailableError } from './etcd/etcd-connection.js';
export {
  LeaderElectionService,
  type LeaderElectionServiceOptions,
  type LeaseOwner,
} from './file/file-leader-election-driver.js';
export { DefaultLeaderElectionService } from './default-leader-election-service.js';
export type {
  LeaderElectionDriver,
  LeaderElectionDriverEvents,
  AcquiredLeadership,
  RenewOutcome,
} from './leader-election-driver.js';
export { LeaderRetrievalService, type LeaderRetrievalServiceOptions } from './file/file-leader-retrieval-driver.js';
export { DefaultLeaderRetrievalService } from './default-leader-retrieval-service.js';
export type { LeaderRetrievalDriver, LeaderRetrievalDriverEvents } from './leader-retrieval-driver.js';
export { FileJobGraphStore } from './file/file-job-graph-store.js';
export {
  DefaultJobGraphStore,
  type StoredJob,
  type StoredJobSummary,
  type TerminalJobStatus,
  JOB_EVENTS_DIR,
  JOB_GRAPH_FILE,
  JOB_MODULE_FILE,
  JOB_STATUS_FILE,
} from './job-graph-store.js';
export type { JobRecord, JobRecordDriver } from './job-record-driver.js';
export { EpochFence, UnconfirmedEpochError, type LeaderEpochSource } from './epoch-fence.js';
export {
  type ProcessEndpoint,
  type ProcessRole,
  type ProcessEndpointInput,
  type EndpointRegistry,
  ENDPOINTS_DIR,
  FileEndpointRegistry,
} from './endpoints.js';
export {
  LeaderLink,
  leaderLinkTimings,
  type LeaderLinkOptions,
  type LeaderLinkProtocol,
  type LeaderLinkListener,
  type LeaderRegistration,
  type LeaderConnection,
} from './leader-link.js';
export { LeaderCallGuard } from './leader-call-guard.js';
