export { runCli, buildProgram } from './program.js';
export { defaultHandlers } from './handlers.js';
export type * from './options.js';
export { processIo, type CliIo } from './io.js';
export { ClusterClient, clientOptionsFrom, type ClusterClientOptions, type LeaderAddress } from './client.js';
export {
  resolveClusterTarget,
  clientConfiguration,
  haServicesOf,
  withHaServices,
  type ClusterTarget,
  type ClusterTargetOptions,
} from './cluster-target.js';
export {
  ClusterPaths,
  DEFAULT_WORKDIR,
  parseClusterFile,
  readClusterFile,
  tryReadClusterFile,
  type ClusterFile,
  type ClusterProcess,
  type ProcessRole,
} from './cluster-file.js';
export { localStatusReport, type KillLeaderReport, type LocalStatusReport } from './local.js';
export { isProcessAlive, signalProcess } from './processes.js';
export { jobStatusToJson, type JobStatusJson } from './job-view.js';
export type { Camelized } from './format.js';
export { renderWatch, progressLine } from './watch-render.js';
export { WatchModel, type WatchView, type WatchObservation } from './watch-model.js';
export {
  recoverySentence,
  recoveryTimeline,
  recoveryOutcome,
  groupSubtasks,
  formatAgo,
  type RerunSubtask,
} from './recovery-text.js';
export { displayWidth, truncateToWidth } from './width.js';
export { describeError, UsageError } from './errors.js';
