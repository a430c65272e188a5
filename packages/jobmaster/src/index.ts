export { startJobMasterProcess } from './jobmaster-process.js';
export type { JobMasterProcess, JobMasterProcessOptions } from './jobmaster-process.js';
export { decideParallelismAndInputs, decideVertexParallelismAndInputs, splitEvenly } from './parallelism-decider.js';
export type {
  SubpartitionRange,
  VertexDecision,
  VertexParallelismAndInputs,
  VertexToDecide,
} from './parallelism-decider.js';

// The parts of a JobMaster, for driving one in-process without gRPC servers around it: the
// recovery benchmark (bench/recovery/replay.ts) writes an event log through the real
// ExecutionGraph, JobEventRecorder and SourceCoordinator and times JobMaster.start(takeover).
export {
  ExecutionGraph,
  ExecutionJobVertex,
  ExecutionVertex,
  type ExecutionGraphListener,
  type ExecutionState,
} from './execution-graph.js';
export { JobMaster } from './job-master.js';
export type { JobMasterContext, JobMasterLeaderContext, JobPersistence } from './job-master-context.js';
export { JobEventRecorder } from './recovery/job-event-recorder.js';
export { ReplayedJobState } from './recovery/job-event-replay.js';
export { FinishedOutputs, type FinishedOutput } from './recovery/finished-outputs.js';
export { PartitionReconciliation } from './recovery/partition-reconciliation.js';
export {
  ShuffleMasterSnapshot,
  type JobShuffleContext,
  type PartitionHolder,
  type PartitionWithMetrics,
  type ShuffleMaster,
  type ShuffleMasterSnapshotContext,
} from './shuffle/shuffle-master.js';
export { TaskManagerShuffleMaster, taskManagerHolder } from './shuffle/task-manager-shuffle-master.js';
export { SourceCoordinator, type SourceCoordinatorSnapshot, type SplitAnswer } from './source-coordinator.js';
export {
  TaskManagerRegistry,
  type RegisteredTaskManager,
  type TaskManagerRegistryListener,
} from './task-manager-registry.js';
export { OperatorCoordinators } from './operator-coordinators.js';
export { InProcessUserCode } from './user-code/in-process-user-code.js';
export { UserCodeWorkers } from './user-code/user-code-workers.js';
export type { JobUserCode } from './user-code/job-user-code.js';
export { startRestServer, type RestServer, type RestServerOptions, type LeaderView } from './rest/index.js';
