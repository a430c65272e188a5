// `@rebound/cli/testing`: the one driver of real clusters for the integration tests, the netns
// tests, the chaos harness and the benchmarks (not part of the CLI users run).
export { ClusterDriver } from './cluster-driver.js';
export {
  ClusterDriverError,
  FAST_FAILOVER_CONFIG,
  type ClusterDriverOptions,
  type ClusterUpOptions,
  type DaemonOptions,
  type StartJobMasterOptions,
  type StartTaskManagerOptions,
  type SubmitOptions,
  type SubmitResult,
} from './cluster-driver-options.js';
export { killLiveClusters } from './live-clusters.js';
export {
  REBOUND_BIN,
  REPO_ROOT,
  defines,
  describeResult,
  runRebound,
  runReboundInProcess,
  type CliResult,
  type CliRunner,
  type RunOptions,
} from './run-cli.js';
export { parseTaskEvents, type TaskEvent } from './task-events.js';
export { TerminalStateError, waitFor, type WaitOptions } from './wait.js';
