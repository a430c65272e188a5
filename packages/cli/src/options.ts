import type { ClusterTargetOptions } from './cluster-target.js';
import type { LeaderOptions } from './leader.js';

/** Typed options of every command, as parsed from the command line by program.ts. */

export interface DaemonOptions {
  readonly haDir: string;
  readonly id?: string;
  readonly configFile?: string;
  readonly logFile?: string;
  /** Raw `-D key=value` arguments. */
  readonly dynamic: readonly string[];
  /** Longest wait for close() after SIGTERM before the process exits anyway. */
  readonly shutdownTimeoutMs: number;
}

export type JobMasterOptions = DaemonOptions;

export interface TaskManagerOptions extends DaemonOptions {
  readonly slots: number;
  readonly dataDir: string;
}

export interface ShuffleWorkerOptions extends DaemonOptions {
  readonly dataDir: string;
}

export interface LocalUpOptions {
  readonly workdir: string;
  readonly jobmasters: number;
  readonly taskmanagers: number;
  /** Shuffle workers (sw-1..); with any, `shuffle.type` is `remote` unless -D says otherwise. */
  readonly shuffleWorkers: number;
  readonly slots: number;
  readonly configFile?: string;
  readonly dynamic: readonly string[];
  readonly timeoutMs: number;
  readonly json: boolean;
}

export interface LocalDownOptions {
  readonly workdir: string;
  readonly timeoutMs: number;
  readonly json: boolean;
}

export interface LocalStatusOptions {
  readonly workdir: string;
  readonly json: boolean;
}

export interface LocalKillLeaderOptions {
  readonly workdir: string;
  readonly json: boolean;
  /** Wait for a standby to take over (false: `--no-wait`, return once the leader is dead). */
  readonly wait: boolean;
  /** `--wait <duration>`; default: the cluster's lease timeout plus a margin. */
  readonly waitMs?: number;
}

export interface LocalStartOptions {
  readonly workdir: string;
  readonly id?: string;
  /** Extra `-D` for this process only (e.g. debug crash points), on top of the cluster's. */
  readonly dynamic: readonly string[];
  readonly timeoutMs: number;
  readonly json: boolean;
}

export interface LocalStartTaskManagerOptions extends LocalStartOptions {
  readonly slots?: number;
  /** Wait until the leader lists the TaskManager as registered. */
  readonly waitRegistered: boolean;
}

export interface LocalStartShuffleWorkerOptions extends LocalStartOptions {
  /** Wait until the worker is registered with the leader (its health reads SERVING). */
  readonly waitRegistered: boolean;
}

export interface SubmitOptions extends ClusterTargetOptions {
  readonly jobFile: string;
  readonly jobArgs: readonly string[];
  readonly detached: boolean;
  /** `-p`: parallelism of every vertex that sets none (Flink's parallelism.default). */
  readonly parallelism?: number;
  readonly json: boolean;
  readonly dynamic: readonly string[];
  readonly pollIntervalMs: number;
  readonly reconnectTimeoutMs?: number;
  /** How a collect() result is printed (table, csv, jsonl, json); default: table on a terminal. */
  readonly outputFormat?: string;
}

/** `rebound results <job>`: a finished job's collect() result. */
export interface ResultsOptions extends ClusterTargetOptions {
  readonly jobId: string;
  readonly outputFormat?: string;
}

export interface ListOptions extends ClusterTargetOptions {
  readonly json: boolean;
  /** Only jobs that have not ended. */
  readonly running: boolean;
}

export interface InfoOptions {
  readonly jobFile: string;
  readonly jobArgs: readonly string[];
  readonly json: boolean;
  readonly dynamic: readonly string[];
  readonly parallelism?: number;
}

export interface LogsOptions {
  readonly workdir: string;
  /** One process (jm-1, tm-2); all when absent. */
  readonly id?: string;
  readonly jobId?: string;
  readonly follow: boolean;
  /** Lowest pino level shown. */
  readonly level: string;
  /** The JSON lines as they are on disk. */
  readonly json: boolean;
}

export interface StatusOptions extends ClusterTargetOptions {
  readonly jobId: string;
  readonly json: boolean;
}

export interface CancelOptions extends ClusterTargetOptions {
  readonly jobId: string;
  readonly json: boolean;
}

export interface WatchOptions extends ClusterTargetOptions {
  readonly jobId: string;
  readonly json: boolean;
  readonly pollIntervalMs: number;
  readonly reconnectTimeoutMs?: number;
}

export interface EventsOptions {
  readonly jobId: string;
  readonly json: boolean;
  readonly haDir?: string;
  readonly cluster?: string;
}

export interface InitOptions {
  /** Directory of the new job project (created if missing). */
  readonly dir: string;
  readonly json: boolean;
}

export interface ConfigOptions {
  readonly json: boolean;
  /** Show the values a local cluster runs with (its work directory). */
  readonly cluster?: string;
  /** Also the debug.* keys (crash points and switches for tests). */
  readonly all?: boolean;
}

/** One function per command; program.ts parses, these act. Each returns the exit code. */
export interface CommandHandlers {
  jobmaster(o: JobMasterOptions): Promise<number>;
  taskmanager(o: TaskManagerOptions): Promise<number>;
  shuffleWorker(o: ShuffleWorkerOptions): Promise<number>;
  localUp(o: LocalUpOptions): Promise<number>;
  localDown(o: LocalDownOptions): Promise<number>;
  localStatus(o: LocalStatusOptions): Promise<number>;
  localKillLeader(o: LocalKillLeaderOptions): Promise<number>;
  leader(o: LeaderOptions): Promise<number>;
  localStartJobMaster(o: LocalStartOptions): Promise<number>;
  localStartTaskManager(o: LocalStartTaskManagerOptions): Promise<number>;
  localStartShuffleWorker(o: LocalStartShuffleWorkerOptions): Promise<number>;
  submit(o: SubmitOptions): Promise<number>;
  results(o: ResultsOptions): Promise<number>;
  list(o: ListOptions): Promise<number>;
  status(o: StatusOptions): Promise<number>;
  cancel(o: CancelOptions): Promise<number>;
  watch(o: WatchOptions): Promise<number>;
  events(o: EventsOptions): Promise<number>;
  config(o: ConfigOptions): Promise<number>;
  info(o: InfoOptions): Promise<number>;
  init(o: InitOptions): Promise<number>;
  logs(o: LogsOptions): Promise<number>;
}
