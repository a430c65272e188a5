export { Prng } from './prng.js';
export {
  FAULT_KINDS,
  FAULT_DESCRIPTIONS,
  EXCLUSIVE_FAULTS,
  ETCD_FAULTS,
  PARTITION_FAULTS,
  FILE_HA_FAULTS,
  SHUFFLE_WORKER_FAULTS,
  TASK_MANAGER_PARTITION_FAULTS,
  HA_BACKENDS,
  faultKindsFor,
  faultUnavailable,
  type HaBackend,
  type FaultEnvironment,
  CRASH_EVENT_TYPES,
  NO_CRASH_POINTS,
  isFaultKind,
  crashPointConfig,
  describeCrashPoint,
  describeFault,
  type FaultKind,
  type FaultPlan,
  type CrashPointSpec,
  type CrashEventType,
  type Trigger,
} from './faults.js';
export { drawFault, drawFaultKinds, environmentOf, type JobShape, type PlanOptions } from './fault-draw.js';
export {
  JOB_NAMES,
  DRAWN_JOB_NAMES,
  JOB_MODULES,
  isJobName,
  drawJobParams,
  jobShape,
  describeJob,
  expectedLines,
  checkOutput,
  outputOracle,
  countWords,
  type JobName,
  type JobParams,
  type OutputCheck,
  type OutputOracle,
} from './jobs.js';
export { diffSortedLines } from './line-diff.js';
export { checkNumberedLines } from './unique-ids-oracle.js';
export { expectedJoinLines } from './join-oracle.js';
export { expectedQ1Lines } from './q1-oracle.js';
export { planRun, type RunPlan, type RunPlanOptions } from './plan.js';
export {
  parseTaskEvents,
  accountTasks,
  finishedBefore,
  subtaskKey,
  type TaskEvent,
  type Disruption,
  type RerunRecord,
  type TaskAccounting,
} from './task-log.js';
export { ChaosCluster, rebound, killAllSync, killLiveClusters, REPO_ROOT } from './cluster.js';
export { JobMonitor, type Sample, type EpochChange } from './monitor.js';
export { classifyRecovery, countFinishedAtFaults, RECOVERY_CLASSES, type RecoveryClass } from './results.js';
export {
  runOne,
  CHAOS_CONFIG,
  PAUSE_REGISTRATION_TIMEOUT_MS,
  type RunOptions,
  type RunResult,
  type FaultRecord,
  type RecoveryRecord,
  type Outcome,
} from './runner.js';
export {
  parseChaosArgs,
  parseCrashPoint,
  replayCommand,
  commandLine,
  USAGE,
  DEFAULT_DEADLINE_MS,
  type ChaosOptions,
} from './options.js';
export {
  summarize,
  tableRows,
  renderTable,
  summaryLines,
  renderMarkdown,
  TABLE_HEADER,
  batchOutcome,
  type BatchOutcome,
  type BatchVerdict,
  type ChaosSummary,
} from './report.js';
export { runChaos, type ChaosReport } from './chaos.js';
export { ChaosError, ChaosUsageError } from './errors.js';
export {
  NetworkCutter,
  partitionsUnavailableReason,
  cleanupPartitionsSync,
  sweepStalePartitions,
} from './partition.js';
export { raftLeaderIndex } from './inject-network.js';
export { etcdHaConfig } from './runner.js';
