import { resolve } from 'node:path';
import {
  ClusterSecurity,
  Configuration,
  type ClusterOverview__Output,
  type JobStatus__Output,
  type JobSummary__Output,
} from '@rebound/core';
import type { LeaderInfo } from '@rebound/ha';
import { ClusterClient, clientOptionsFrom } from '../client.js';
import { clientConfiguration, withHaServices } from '../cluster-target.js';
import { ClusterPaths, readClusterFile, type ClusterProcess } from '../cluster-file.js';
import { jobStatusToJson, type JobStatusJson } from '../job-view.js';
import type { KillLeaderReport } from '../local/kill-leader.js';
import { isProcessAlive, signalProcess } from '../processes.js';
import {
  REPO_ROOT,
  defines,
  describeResult,
  runRebound,
  type CliResult,
  type CliRunner,
  type RunOptions,
} from './run-cli.js';
import { TerminalStateError, waitFor, type WaitOptions } from './wait.js';

import {
  ClusterDriverError,
  type ClusterDriverOptions,
  type ClusterUpOptions,
  type StartJobMasterOptions,
  type StartTaskManagerOptions,
  type SubmitOptions,
  type SubmitResult,
} from './cluster-driver-options.js';
import { ClusterProcesses } from './cluster-processes.js';
import { track, untrack } from './live-clusters.js';

const CLIENT_COMMANDS = new Set(['submit', 'list', 'status', 'cancel', 'watch', 'events']);
const TARGET_FLAGS = ['--cluster', '--ha-dir', '--address', '--workdir'];

/**
 * The one driver of a cluster of real processes in a work directory with the layout of `rebound
 * local` (cluster.json, secret, logs/, data/, ha/), for the integration tests, the netns tests,
 * the chaos harness and the benchmarks: runs the CLI against it, starts and stops its daemons,
 * and asks the leader in-process. Reading, signalling and starting single daemons is
 * ClusterProcesses'.
 */
export class ClusterDriver extends ClusterProcesses {
  protected readonly cli: CliRunner;
  private client: ClusterClient | undefined;
  private stopped = false;
  /** What `rebound local up` printed (empty before up()): tests of its output share the cluster. */
  upOutput = '';

  constructor(
    workdir: string,
    private readonly options: ClusterDriverOptions = {},
  ) {
    super(workdir);
    this.cli = options.cli ?? runRebound;
  }

  /** `rebound local up` in the work directory; on failure stops what it started and throws. */
  async up(opts: ClusterUpOptions = {}): Promise<this> {
    track(this);
    const args = [
      'local',
      'up',
      '--workdir',
      this.workdir,
      '--jobmasters',
      String(opts.jobmasters ?? 2),
      '--taskmanagers',
      String(opts.taskmanagers ?? 3),
      '--slots',
      String(opts.slots ?? 2),
      ...(opts.shuffleWorkers ? ['--shuffle-workers', String(opts.shuffleWorkers)] : []),
      '--timeout',
      `${opts.startTimeoutMs ?? 60_000} ms`,
      ...defines(opts.config ?? {}),
    ];
    const r = await this.cli(args);
    if (r.code !== 0) {
      await this.shutdown();
      throw new ClusterDriverError(`${describeResult(['local', 'up'], r)} (workdir ${this.workdir})`);
    }
    this.upOutput = r.stdout;
    return this;
  }

  /**
   * Runs the CLI against this cluster: `--workdir` is added to `local` commands and `--cluster`
   * to client commands, unless the arguments already name a target.
   */
  rebound(args: readonly string[], opts: RunOptions = {}): Promise<CliResult> {
    return this.cli(this.withTarget(args), opts);
  }

  private withTarget(args: readonly string[]): string[] {
    if (args.some((a) => TARGET_FLAGS.includes(a))) return [...args];
    if (args[0] === 'local' && args.length >= 2)
      return [args[0], args[1]!, '--workdir', this.workdir, ...args.slice(2)];
    if (args[0] !== undefined && CLIENT_COMMANDS.has(args[0]))
      return [args[0], '--cluster', this.workdir, ...args.slice(1)];
    return [...args];
  }

  private async reboundJson<T>(args: readonly string[]): Promise<T> {
    const r = await this.rebound(args);
    if (r.code !== 0) throw new ClusterDriverError(describeResult(args, r));
    return JSON.parse(r.stdout) as T;
  }

  /** Submits a job module (detached unless `wait`; relative to the repository); resolves with its id and the CLI's output. */
  async submit(jobFile: string, jobArgs: readonly string[] = [], opts: SubmitOptions = {}): Promise<SubmitResult> {
    const args = [
      'submit',
      resolve(REPO_ROOT, jobFile),
      '--json',
      ...(opts.wait ? [] : ['--detached']),
      ...defines(opts.config ?? {}),
      '--',
      ...jobArgs,
    ];
    const r = await this.rebound(args, opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {});
    const first = r.stdout.split('\n').find((l) => l.startsWith('{'));
    const jobId = first ? (JSON.parse(first) as { jobId?: string }).jobId : undefined;
    if (!jobId) throw new ClusterDriverError(describeResult(args, r));
    return { ...r, jobId };
  }

  /** The driver's client, from cluster.json (as `--cluster <workdir>` would make it). */
  async clusterClient(): Promise<ClusterClient> {
    if (!this.client) {
      const target = await this.target();
      this.client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    }
    return this.client;
  }

  private async target() {
    const file = await readClusterFile(this.workdir);
    return { kind: 'cluster' as const, workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file };
  }

  private callOptions(): { failoverTimeoutMs?: number } {
    const ms = this.options.failoverTimeoutMs;
    return ms === undefined ? {} : { failoverTimeoutMs: ms };
  }

  /** The job's status as the leader reports it. */
  async jobStatus(jobId: string): Promise<JobStatus__Output> {
    return (await this.clusterClient()).getJobStatus(jobId, this.callOptions());
  }

  /** The job's status as `rebound status --json` prints it (asked in-process: cheap to poll). */
  async status(jobId: string): Promise<JobStatusJson> {
    return jobStatusToJson(await this.jobStatus(jobId));
  }

  async listJobs(): Promise<JobSummary__Output[]> {
    return (await this.clusterClient()).listJobs(this.callOptions());
  }

  async overview(): Promise<ClusterOverview__Output> {
    return (await this.clusterClient()).getClusterOverview(this.callOptions());
  }

  /** See waitFor: polls with a deadline, never a fixed sleep. */
  waitFor<T>(
    predicate: () => T | Promise<T>,
    timeoutMs: number,
    what: string,
    opts: WaitOptions = {},
  ): Promise<Exclude<T, undefined | false | null>> {
    return waitFor(predicate, timeoutMs, what, opts);
  }

  /** Waits until the job is in one of `states` (default FINISHED); fails early on another terminal state. */
  async waitForJob(jobId: string, timeoutMs: number, states: readonly string[] = ['FINISHED']): Promise<JobStatusJson> {
    return this.waitFor(
      async () => {
        const s = await this.status(jobId);
        if (states.includes(s.state)) return s;
        if (['FINISHED', 'FAILED', 'CANCELED'].includes(s.state)) {
          throw new TerminalStateError(
            `job ${jobId} ended ${s.state}${s.failure ? `: ${s.failure}` : ''} (expected ${states.join(' or ')})`,
          );
        }
        return undefined;
      },
      timeoutMs,
      `job ${jobId} to be ${states.join(' or ')}`,
    );
  }

  async waitForTaskManagers(ids: readonly string[], timeoutMs: number): Promise<ClusterOverview__Output> {
    return this.waitFor(
      async () => {
        const o = await this.overview();
        const registered = new Set(o.task_managers.map((t) => t.task_manager_id));
        return ids.every((id) => registered.has(id)) ? o : undefined;
      },
      timeoutMs,
      `TaskManagers ${ids.join(', ')} to be registered with the leader`,
    );
  }

  /** The leader the HA backend records, as clients see it. */
  async leader(): Promise<LeaderInfo | undefined> {
    return withHaServices(await this.target(), (ha) => ha.getLeader());
  }

  /**
   * SIGKILLs the leading JobMaster through `rebound local kill-leader`. Returns once it is dead
   * (`--no-wait`): tests look at what happens while nobody leads. `waitMs` waits for the takeover.
   */
  killLeader(opts: { waitMs?: number } = {}): Promise<KillLeaderReport> {
    return this.reboundJson([
      'local',
      'kill-leader',
      '--json',
      ...(opts.waitMs === undefined ? ['--no-wait'] : ['--wait', `${opts.waitMs} ms`]),
    ]);
  }

  /** Adds a JobMaster (or restarts `id`) through `rebound local start-jobmaster`. */
  startJobMaster(opts: StartJobMasterOptions = {}): Promise<ClusterProcess> {
    return this.reboundJson(['local', 'start-jobmaster', '--json', ...startFlags(opts)]);
  }

  /** Adds a TaskManager (or restarts `id`); by default waits until the leader registered it. */
  startTaskManager(opts: StartTaskManagerOptions = {}): Promise<ClusterProcess> {
    return this.reboundJson([
      'local',
      'start-taskmanager',
      '--json',
      ...(opts.slots ? ['--slots', String(opts.slots)] : []),
      ...(opts.wait === false ? ['--no-wait'] : []),
      ...startFlags(opts),
    ]);
  }

  /**
   * Adds a shuffle worker (or restarts `id`, which finds its partitions on disk again); by
   * default waits until the leader registered it.
   */
  startShuffleWorker(opts: StartJobMasterOptions & { readonly wait?: boolean } = {}): Promise<ClusterProcess> {
    return this.reboundJson([
      'local',
      'start-shuffle-worker',
      '--json',
      ...(opts.wait === false ? ['--no-wait'] : []),
      ...startFlags(opts),
    ]);
  }

  /** What a process of this cluster authenticates with (the secret in the work directory), for raw gRPC clients. */
  security(): ClusterSecurity {
    return ClusterSecurity.of(Configuration.of({ 'security.auth.token-file': ClusterPaths.secret(this.workdir) }));
  }

  /** Stops every daemon: SIGCONT first (a stopped process ignores SIGTERM), then `local down`. */
  async stop(): Promise<void> {
    await this.shutdown();
  }

  private async shutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.client?.close();
    this.client = undefined;
    for (const p of this.processesSync()) if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGCONT');
    const timeout = `${this.options.downTimeoutMs ?? 10_000} ms`;
    const r = await this.cli(['local', 'down', '--workdir', this.workdir, '--timeout', timeout]).catch(
      (err: Error) => ({ code: 1, signal: null, stdout: '', stderr: err.message }) as CliResult,
    );
    if (r.code !== 0) this.killAllSync();
    untrack(this);
  }
}

function startFlags(opts: StartJobMasterOptions): string[] {
  return [
    ...(opts.id ? ['--id', opts.id] : []),
    ...(opts.timeoutMs !== undefined ? ['--timeout', `${opts.timeoutMs} ms`] : []),
    ...defines(opts.config ?? {}),
  ];
}
