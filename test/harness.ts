import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { onTestFailed } from 'vitest';
import {
  ClusterClient,
  ClusterPaths,
  clientConfiguration,
  clientOptionsFrom,
  isProcessAlive,
  jobStatusToJson,
  readClusterFile,
  signalProcess,
  type ClusterProcess,
  type JobStatusJson,
  withHaServices,
} from '@rebound/cli';
import { ClusterSecurity, Configuration, type ClusterOverview__Output } from '@rebound/core';
import type { LeaderInfo } from '@rebound/ha';
import { makeTempDir } from './util.js';
import { parseTaskEvents, type TaskEvent } from '@rebound/chaos';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const REBOUND_BIN = join(REPO_ROOT, 'bin', 'rebound.js');

/** Short timeouts so that failure detection and failover take a second or two, not a minute. */
export const TEST_CONFIG: Readonly<Record<string, string>> = {
  'heartbeat.interval': '200 ms',
  'heartbeat.timeout': '2 s',
  'high-availability.lease.timeout': '1 s',
  'high-availability.lease.renew-interval': '200 ms',
  'high-availability.lease.poll-interval': '100 ms',
  'rpc.timeout': '3 s',
  'restart-strategy.fixed-delay.delay': '100 ms',
};

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunOptions {
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  /** The command is SIGKILLed after this long (default 120 s). */
  readonly timeoutMs?: number;
  /** Called with each chunk of stdout as it arrives (a test can wait on what a long command printed so far). */
  readonly onStdout?: (chunk: string) => void;
}

/** Runs `node bin/rebound.js ARGS` and captures its output and exit code. */
export function runRebound(args: readonly string[], opts: RunOptions = {}): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [REBOUND_BIN, ...args], {
      cwd: opts.cwd ?? REPO_ROOT,
      env: { ...process.env, ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      opts.onStdout?.(d);
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

function describeResult(args: readonly string[], r: CliResult): string {
  return `rebound ${args.join(' ')} exited ${r.code ?? r.signal}: ${r.stderr.trim() || r.stdout.trim()}`;
}

// One parser of the TaskManagers' task lifecycle lines, shared with the chaos harness.
export { parseTaskEvents, type TaskEvent };

export interface LocalClusterOptions {
  readonly jobmasters?: number;
  readonly taskmanagers?: number;
  readonly slots?: number;
  /** On top of TEST_CONFIG. */
  readonly config?: Readonly<Record<string, string>>;
  /** Default: a fresh temp directory. */
  readonly workdir?: string;
  /** How long `local up` may take (default 60 s). */
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

export interface WaitOptions {
  readonly intervalMs?: number;
}

const CLIENT_COMMANDS = new Set(['submit', 'list', 'status', 'cancel', 'watch', 'events']);
const TARGET_FLAGS = ['--cluster', '--ha-dir', '--address', '--workdir'];

function toDefines(config: Readonly<Record<string, string>>): string[] {
  return Object.entries(config).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
}

const live = new Set<LocalCluster>();
let exitHookInstalled = false;

/** If a test run dies without stop(), do not leave detached daemons behind. */
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const cluster of live) cluster.killAllSync();
  });
}

/**
 * A local cluster of real processes for integration tests, started through the CLI's
 * `rebound local up` in a temporary work directory.
 */
export class LocalCluster {
  readonly haDir: string;
  private client: ClusterClient | undefined;
  private failed = false;
  private stopped = false;

  private constructor(
    readonly workdir: string,
    readonly config: Readonly<Record<string, string>>,
    private readonly ownsWorkdir: boolean,
  ) {
    this.haDir = ClusterPaths.haDir(workdir);
  }

  static async start(opts: LocalClusterOptions = {}): Promise<LocalCluster> {
    const workdir = opts.workdir ? resolve(opts.workdir) : await makeTempDir('rebound-it-');
    const config = { ...TEST_CONFIG, ...opts.config };
    const cluster = new LocalCluster(workdir, config, opts.workdir === undefined);
    try {
      // Inside a test (not beforeAll): keep the work directory of a failed test for inspection.
      onTestFailed(() => cluster.markFailed());
    } catch {
      // Called from a hook: the caller passes { keepWorkdir } to stop() if it wants to keep it.
    }
    installExitHook();
    live.add(cluster);
    const args = [
      'local', 'up', '--workdir', workdir,
      '--jobmasters', String(opts.jobmasters ?? 2),
      '--taskmanagers', String(opts.taskmanagers ?? 3),
      '--slots', String(opts.slots ?? 2),
      '--timeout', `${opts.startTimeoutMs ?? 60_000} ms`,
      ...toDefines(config),
    ];
    const r = await runRebound(args);
    if (r.code !== 0) {
      cluster.markFailed();
      await cluster.stop().catch(() => {});
      throw new Error(`${describeResult(['local', 'up'], r)} (workdir ${workdir})`);
    }
    return cluster;
  }

  /** What a process of this cluster authenticates with (the secret `local up` wrote), for raw gRPC clients. */
  security(): ClusterSecurity {
    return ClusterSecurity.of(Configuration.of({ 'security.auth.token-file': ClusterPaths.secret(this.workdir) }));
  }

  /** Keeps the work directory at stop() (set automatically when the test that started it fails). */
  markFailed(): void {
    this.failed = true;
  }

  /**
   * Runs the CLI against this cluster: `--workdir` is added to `local` commands and `--cluster`
   * to client commands, unless the arguments already name a target.
   */
  rebound(args: readonly string[], opts: RunOptions = {}): Promise<CliResult> {
    return runRebound(this.withTarget(args), opts);
  }

  private withTarget(args: readonly string[]): string[] {
    if (args.some((a) => TARGET_FLAGS.includes(a))) return [...args];
    if (args[0] === 'local' && args.length >= 2) return [args[0], args[1]!, '--workdir', this.workdir, ...args.slice(2)];
    if (args[0] !== undefined && CLIENT_COMMANDS.has(args[0])) return [args[0], '--cluster', this.workdir, ...args.slice(1)];
    return [...args];
  }

  /** Submits a job module (detached unless `wait`); resolves with its id and the CLI's output. */
  async submit(jobFile: string, jobArgs: readonly string[] = [], opts: SubmitOptions = {}): Promise<SubmitResult> {
    const args = ['submit', resolve(REPO_ROOT, jobFile), '--json', ...(opts.wait ? [] : ['--detached']), ...toDefines(opts.config ?? {}), '--', ...jobArgs];
    const r = await this.rebound(args, { ...(opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}) });
    const first = r.stdout.split('\n').find((l) => l.startsWith('{'));
    const jobId = first ? (JSON.parse(first) as { jobId?: string }).jobId : undefined;
    if (!jobId) throw new Error(describeResult(args, r));
    return { ...r, jobId };
  }

  private async clusterClient(): Promise<ClusterClient> {
    if (!this.client) {
      const file = await readClusterFile(this.workdir);
      const target = { kind: 'cluster' as const, workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file };
      this.client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    }
    return this.client;
  }

  /** The job's status as `rebound status --json` prints it (asked in-process: cheap to poll). */
  async status(jobId: string): Promise<JobStatusJson> {
    return jobStatusToJson(await (await this.clusterClient()).getJobStatus(jobId));
  }

  async overview(): Promise<ClusterOverview__Output> {
    return (await this.clusterClient()).getClusterOverview();
  }

  /**
   * Polls `predicate` until it returns something other than undefined/false/null, or throws
   * after `timeoutMs` saying what it waited for. Errors thrown by the predicate count as "not yet"
   * and the last one is reported.
   */
  async waitFor<T>(predicate: () => T | Promise<T>, timeoutMs: number, what: string, opts: WaitOptions = {}): Promise<Exclude<T, undefined | false | null>> {
    return waitFor(predicate, timeoutMs, what, opts);
  }

  /** Waits until the job is in one of `states` (default FINISHED); fails early on another terminal state. */
  async waitForJob(jobId: string, timeoutMs: number, states: readonly string[] = ['FINISHED']): Promise<JobStatusJson> {
    return this.waitFor(
      async () => {
        const s = await this.status(jobId);
        if (states.includes(s.state)) return s;
        if (['FINISHED', 'FAILED', 'CANCELED'].includes(s.state)) {
          throw new TerminalStateError(`job ${jobId} ended ${s.state}${s.failure ? `: ${s.failure}` : ''} (expected ${states.join(' or ')})`);
        }
        return undefined;
      },
      timeoutMs,
      `job ${jobId} to be ${states.join(' or ')}`,
    );
  }

  async leader(): Promise<LeaderInfo | undefined> {
    const file = await readClusterFile(this.workdir);
    return withHaServices({ kind: 'cluster', workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file }, (ha) => ha.getLeader());
  }

  async processes(): Promise<readonly ClusterProcess[]> {
    return (await readClusterFile(this.workdir)).processes;
  }

  async process(id: string): Promise<ClusterProcess> {
    const p = (await this.processes()).find((x) => x.id === id);
    if (!p) throw new Error(`no process ${id} in ${this.workdir}/cluster.json`);
    return p;
  }

  /** SIGKILLs the leading JobMaster through `rebound local kill-leader`. */
  async killLeader(): Promise<{ id: string; pid: number; epoch: number; address: string }> {
    const r = await this.rebound(['local', 'kill-leader', '--json']);
    if (r.code !== 0) throw new Error(describeResult(['local', 'kill-leader'], r));
    return JSON.parse(r.stdout) as { id: string; pid: number; epoch: number; address: string };
  }

  /** Sends `signal` to a process of the cluster; for SIGKILL/SIGTERM, waits until it is gone. */
  async kill(processId: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<ClusterProcess> {
    const p = await this.process(processId);
    // Never signal a recycled pid: it must still be the daemon started with this id.
    if (!isProcessAlive(p.pid, p.id) || !signalProcess(p.pid, signal)) throw new Error(`cannot send ${signal} to ${processId} (pid ${p.pid}): not running`);
    if (signal === 'SIGKILL' || signal === 'SIGTERM') {
      await this.waitFor(() => !isProcessAlive(p.pid, p.id), 30_000, `${processId} (pid ${p.pid}) to exit after ${signal}`);
    }
    return p;
  }

  async isAlive(processId: string): Promise<boolean> {
    const p = await this.process(processId);
    return isProcessAlive(p.pid, p.id);
  }

  /** Adds a JobMaster (or restarts `id`) through `rebound local start-jobmaster`. */
  async startJobMaster(opts: { id?: string; config?: Readonly<Record<string, string>> } = {}): Promise<ClusterProcess> {
    const args = ['local', 'start-jobmaster', '--json', ...(opts.id ? ['--id', opts.id] : []), ...toDefines(opts.config ?? {})];
    const r = await this.rebound(args);
    if (r.code !== 0) throw new Error(describeResult(args, r));
    return JSON.parse(r.stdout) as ClusterProcess;
  }

  /** Adds a TaskManager (or restarts `id`); by default waits until the leader registered it. */
  async startTaskManager(opts: { id?: string; slots?: number; wait?: boolean; config?: Readonly<Record<string, string>> } = {}): Promise<ClusterProcess> {
    const args = [
      'local', 'start-taskmanager', '--json',
      ...(opts.id ? ['--id', opts.id] : []),
      ...(opts.slots ? ['--slots', String(opts.slots)] : []),
      ...(opts.wait === false ? ['--no-wait'] : []),
      ...toDefines(opts.config ?? {}),
    ];
    const r = await this.rebound(args);
    if (r.code !== 0) throw new Error(describeResult(args, r));
    return JSON.parse(r.stdout) as ClusterProcess;
  }

  /** Task lifecycle events from the TaskManager logs (all TaskManagers when `tmId` is omitted). */
  async taskEvents(tmId?: string): Promise<TaskEvent[]> {
    const tms = (await this.processes()).filter((p) => p.role === 'taskmanager' && (tmId === undefined || p.id === tmId));
    if (tmId !== undefined && tms.length === 0) throw new Error(`no TaskManager ${tmId} in ${this.workdir}`);
    const all = await Promise.all(tms.map(async (p) => parseTaskEvents(await readFile(p.logFile, 'utf8').catch(() => ''), p.id)));
    return all.flat().sort((a, b) => a.time - b.time);
  }

  /** The log of a process (pino JSON lines plus anything it wrote to stderr). */
  async log(processId: string): Promise<string> {
    return readFile(ClusterPaths.logFile(this.workdir, processId), 'utf8').catch(() => '');
  }

  /** `rebound local down`, then removes the work directory unless a test failed (or `keepWorkdir`). */
  async stop(opts: { keepWorkdir?: boolean } = {}): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.client?.close();
    this.client = undefined;
    const r = await runRebound(['local', 'down', '--workdir', this.workdir, '--timeout', '10 s']).catch((err: Error) => ({ code: 1, stderr: err.message }) as CliResult);
    if (r.code !== 0) this.killAllSync();
    live.delete(this);
    const keep = opts.keepWorkdir || this.failed || process.env.REBOUND_KEEP_WORKDIR === '1';
    if (keep || !this.ownsWorkdir) {
      if (keep) process.stderr.write(`rebound test: keeping work directory ${this.workdir}\n`);
      return;
    }
    await rm(this.workdir, { recursive: true, force: true });
  }

  /** SIGKILL every process of the cluster, synchronously (exit hook, failed stop). */
  killAllSync(): void {
    try {
      const file = JSON.parse(readFileSync(join(this.workdir, 'cluster.json'), 'utf8')) as { processes?: { pid: number; id: string }[] };
      for (const p of file.processes ?? []) if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGKILL');
    } catch {
      // No cluster.json: nothing was started.
    }
  }

  /** Names of the files in the logs directory (for diagnostics). */
  logFiles(): string[] {
    try {
      return readdirSync(ClusterPaths.logsDir(this.workdir));
    } catch {
      return [];
    }
  }
}

interface TaskLike {
  readonly result?: { readonly state?: string };
  readonly tasks?: readonly TaskLike[];
}

/**
 * Whether any test of a suite failed: `afterAll((_, suite) => cluster.stop({ keepWorkdir: suiteFailed(suite) }))`
 * keeps the work directory of a cluster started in beforeAll when one of its tests failed.
 */
export function suiteFailed(suite: TaskLike): boolean {
  return suite.result?.state === 'fail' || (suite.tasks ?? []).some((t) => suiteFailed(t));
}

/** Thrown by a waitFor predicate to stop waiting at once (e.g. the job ended in the wrong state). */
export class TerminalStateError extends Error {}

/** Polls `predicate` with a deadline (no fixed sleeps): see LocalCluster.waitFor. */
export async function waitFor<T>(predicate: () => T | Promise<T>, timeoutMs: number, what: string, opts: WaitOptions = {}): Promise<Exclude<T, undefined | false | null>> {
  const deadline = Date.now() + timeoutMs;
  const interval = opts.intervalMs ?? 50;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await predicate();
      if (v !== undefined && v !== false && v !== null) return v as Exclude<T, undefined | false | null>;
    } catch (err) {
      if (err instanceof TerminalStateError) throw err;
      lastError = err;
    }
    if (Date.now() > deadline) {
      const last = lastError ? ` (last error: ${lastError instanceof Error ? lastError.message : String(lastError)})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last}`);
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}
