import { ErrorCode, ReboundError } from '@rebound/core';
import type { ProcessRole } from '../cluster-file.js';
import type { CliResult, CliRunner } from './run-cli.js';

/** The driver could not do what it was asked (a command failed, a process is not running). */
export class ClusterDriverError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.INTERNAL, message);
  }
}

export interface ClusterDriverOptions {
  /** How the CLI runs: a child process per command (default) or runReboundInProcess. */
  readonly cli?: CliRunner;
  /** Failover budget of the driver's own client calls (0: one attempt; default: the client's). */
  readonly failoverTimeoutMs?: number;
  /** `local down --timeout` at stop() (default 10 s). */
  readonly downTimeoutMs?: number;
}

export interface ClusterUpOptions {
  readonly jobmasters?: number;
  readonly taskmanagers?: number;
  readonly slots?: number;
  /** `local up --shuffle-workers` (default 0); with any, the cluster runs the remote shuffle. */
  readonly shuffleWorkers?: number;
  /** `-D` values of every daemon (and of the client: `local up` records them in cluster.json). */
  readonly config?: Readonly<Record<string, string>>;
  /** `local up --timeout` (default 60 s). */
  readonly startTimeoutMs?: number;
}

export interface SubmitOptions {
  /** Wait for the job to end (default false: `--detached`). */
  readonly wait?: boolean;
  /** Job-level `-D` values. */
  readonly config?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

export interface SubmitResult extends CliResult {
  readonly jobId: string;
}

export interface StartJobMasterOptions {
  readonly id?: string;
  readonly config?: Readonly<Record<string, string>>;
  /** `--timeout` of the start command (default: the CLI's). */
  readonly timeoutMs?: number;
}

export interface StartTaskManagerOptions extends StartJobMasterOptions {
  readonly slots?: number;
  /** Wait until the leader registered it (default true). */
  readonly wait?: boolean;
}

/** A daemon started by the driver itself rather than `rebound local` (see startDaemon). */
export interface DaemonOptions {
  readonly role: ProcessRole;
  readonly id: string;
  readonly config: Readonly<Record<string, string>>;
  readonly slots?: number;
  /** Runs node in place of itself, e.g. `ip netns exec <ns>`. */
  readonly launcher?: readonly string[];
  readonly deadline: number;
}

/** Short timeouts so that failure detection and failover take a second or two, not a minute. */
export const FAST_FAILOVER_CONFIG: Readonly<Record<string, string>> = {
  'heartbeat.interval': '200 ms',
  'heartbeat.timeout': '2 s',
  'high-availability.lease.timeout': '1 s',
  'high-availability.lease.renew-interval': '200 ms',
  'high-availability.lease.poll-interval': '100 ms',
  'rpc.timeout': '3 s',
  'restart-strategy.fixed-delay.delay': '100 ms',
};
