import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ClusterClient,
  ClusterPaths,
  clientConfiguration,
  clientOptionsFrom,
  defaultHandlers,
  isProcessAlive,
  readClusterFile,
  runCli,
  signalProcess,
  type ClusterProcess,
  type CliIo,
  withHaServices,
} from '@rebound/cli';
import { ClusterSecurity, Configuration, type JobStatus__Output, type JobSummary__Output } from '@rebound/core';
import type { LeaderInfo } from '@rebound/ha';
import { ChaosError } from './errors.js';

export const REPO_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** Work directories of clusters started and not yet stopped (killed on Ctrl-C or exit). */
const live = new Set<string>();

/** SIGKILLs every cluster this process started and did not stop. */
export function killLiveClusters(): void {
  for (const w of live) killAllSync(w);
  live.clear();
}

export interface CliResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs a `rebound` command inside this process (the daemons it starts are real, detached
 * processes): no CLI start-up per fault, which matters when a run restarts processes several times.
 */
export async function rebound(args: readonly string[]): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    stdout: { write: (s: string) => ((stdout += s), true) } as CliIo['stdout'],
    stderr: { write: (s: string) => ((stderr += s), true) } as CliIo['stderr'],
    env: { ...process.env, NO_COLOR: '1' },
    cwd: REPO_ROOT,
  };
  const code = await runCli(args, io, defaultHandlers(io));
  return { code, stdout, stderr };
}

function defines(config: Readonly<Record<string, string>>): string[] {
  return Object.entries(config).flatMap(([k, v]) => ['-D', `${k}=${v}`]);
}

function failed(what: string, r: CliResult): ChaosError {
  return new ChaosError(`rebound ${what} exited ${r.code}: ${(r.stderr || r.stdout).trim().split('\n')[0] ?? ''}`);
}

/** A local cluster of one run: started with `rebound local up`, driven through signals and the CLI. */
export class ChaosCluster {
  readonly haDir: string;
  private client: ClusterClient | undefined;

  private constructor(readonly workdir: string) {
    this.haDir = ClusterPaths.haDir(workdir);
  }

  static async up(workdir: string, opts: { jobmasters: number; taskmanagers: number; slots: number; config: Readonly<Record<string, string>> }): Promise<ChaosCluster> {
    const args = [
      'local', 'up', '--workdir', workdir, '--jobmasters', String(opts.jobmasters), '--taskmanagers', String(opts.taskmanagers),
      '--slots', String(opts.slots), '--timeout', '120 s', ...defines(opts.config),
    ];
    live.add(resolve(workdir));
    const r = await rebound(args);
    const cluster = new ChaosCluster(resolve(workdir));
    if (r.code !== 0) {
      cluster.killAll();
      throw failed('local up', r);
    }
    return cluster;
  }

  async processes(): Promise<readonly ClusterProcess[]> {
    return (await readClusterFile(this.workdir)).processes;
  }

  async process(id: string): Promise<ClusterProcess> {
    const p = (await this.processes()).find((x) => x.id === id);
    if (!p) throw new ChaosError(`no process ${id} in ${this.workdir}/cluster.json`);
    return p;
  }

  async jobMasterIds(): Promise<string[]> {
    return (await this.processes()).filter((p) => p.role === 'jobmaster').map((p) => p.id);
  }

  async isAlive(id: string): Promise<boolean> {
    const p = await this.process(id);
    return isProcessAlive(p.pid, p.id);
  }

  async leader(): Promise<LeaderInfo | undefined> {
    const file = await readClusterFile(this.workdir);
    return withHaServices({ kind: 'cluster', workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file }, (ha) => ha.getLeader()).catch(() => undefined);
  }

  /** Sends a signal; for SIGKILL waits until the process is gone. Returns false if it was not running. */
  async signal(id: string, sig: NodeJS.Signals): Promise<boolean> {
    const p = await this.process(id);
    if (!isProcessAlive(p.pid, p.id)) return false;
    if (!signalProcess(p.pid, sig)) return false;
    if (sig === 'SIGKILL') {
      const deadline = Date.now() + 10_000;
      while (isProcessAlive(p.pid, p.id)) {
        if (Date.now() > deadline) throw new ChaosError(`${id} (pid ${p.pid}) did not exit after SIGKILL`);
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    return true;
  }

  async startJobMaster(id: string, config: Readonly<Record<string, string>>): Promise<ClusterProcess> {
    const r = await rebound(['local', 'start-jobmaster', '--workdir', this.workdir, '--json', '--id', id, '--timeout', '120 s', ...defines(config)]);
    if (r.code !== 0) throw failed(`local start-jobmaster --id ${id}`, r);
    return JSON.parse(r.stdout) as ClusterProcess;
  }

  /** Restarts a TaskManager under the same id (a new TaskManager: it wipes its partitions). */
  async startTaskManager(id: string): Promise<ClusterProcess> {
    const r = await rebound(['local', 'start-taskmanager', '--workdir', this.workdir, '--json', '--id', id, '--no-wait', '--timeout', '120 s']);
    if (r.code !== 0) throw failed(`local start-taskmanager --id ${id}`, r);
    return JSON.parse(r.stdout) as ClusterProcess;
  }

  async submit(jobFile: string, args: readonly string[], config: Readonly<Record<string, string>> = {}): Promise<string> {
    const r = await rebound(['submit', join(REPO_ROOT, jobFile), '--cluster', this.workdir, '--json', '--detached', ...defines(config), '--', ...args]);
    const first = r.stdout.split('\n').find((l) => l.startsWith('{'));
    const jobId = first ? (JSON.parse(first) as { jobId?: string }).jobId : undefined;
    if (r.code !== 0 || !jobId) throw failed('submit', r);
    return jobId;
  }

  /** `rebound submit --detached --json`, whatever its outcome (a poison job's submission may fail). */
  async submitRaw(jobFile: string, args: readonly string[]): Promise<CliResult> {
    return rebound(['submit', join(REPO_ROOT, jobFile), '--cluster', this.workdir, '--json', '--detached', '--', ...args]).catch((err: unknown) => ({
      code: 1,
      stdout: '',
      stderr: err instanceof Error ? err.message : String(err),
    }));
  }

  /** One attempt at ListJobs from whoever leads (throws while nobody does). */
  async listJobs(): Promise<JobSummary__Output[]> {
    return (await this.clusterClient()).listJobs({ failoverTimeoutMs: 0 });
  }

  /** The credentials every process of this cluster uses (`local up` writes the secret into the work directory). */
  security(): ClusterSecurity {
    return ClusterSecurity.of(Configuration.of({ 'security.auth.token-file': ClusterPaths.secret(this.workdir) }));
  }

  private async clusterClient(): Promise<ClusterClient> {
    if (!this.client) {
      const file = await readClusterFile(this.workdir);
      const target = { kind: 'cluster' as const, workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file };
      this.client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    }
    return this.client;
  }

  /** One attempt at the job's status from whoever leads (throws while nobody does). */
  async status(jobId: string): Promise<JobStatus__Output> {
    return (await this.clusterClient()).getJobStatus(jobId, { failoverTimeoutMs: 0 });
  }

  async log(id: string): Promise<string> {
    return readFile(ClusterPaths.logFile(this.workdir, id), 'utf8').catch(() => '');
  }

  /** Stops every process: SIGCONT first (a stopped process ignores SIGTERM), then `local down`. */
  async down(): Promise<void> {
    this.client?.close();
    this.client = undefined;
    for (const p of await this.processes().catch(() => [] as ClusterProcess[])) {
      if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGCONT');
    }
    const r = await rebound(['local', 'down', '--workdir', this.workdir, '--timeout', '5 s']).catch(() => ({ code: 1, stdout: '', stderr: '' }));
    if (r.code !== 0) this.killAll();
    live.delete(this.workdir);
  }

  /** SIGKILLs every process of the cluster, synchronously (exit hooks, failed starts). */
  killAll(): void {
    killAllSync(this.workdir);
  }
}

export function killAllSync(workdir: string): void {
  try {
    const text = readFileSyncSafe(ClusterPaths.file(workdir));
    if (!text) return;
    const file = JSON.parse(text) as { processes?: { pid: number; id: string }[] };
    for (const p of file.processes ?? []) if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGKILL');
  } catch {
    // No cluster file: nothing was started.
  }
}

function readFileSyncSafe(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}
