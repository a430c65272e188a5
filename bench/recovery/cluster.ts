/**
 * A local cluster for the recovery benchmark, driven through `node bin/rebound.js local ...`
 * (like test/harness.ts, which cannot be imported outside vitest). The leader is SIGKILLed from
 * this process, not through `rebound local kill-leader`, so the kill time is known to the
 * millisecond instead of "somewhere during a CLI start-up".
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ClusterClient,
  ClusterPaths,
  clientConfiguration,
  clientOptionsFrom,
  isProcessAlive,
  readClusterFile,
  signalProcess,
  type ClusterProcess,
  withHaServices,
} from '@rebound/cli';
import type { JobStatus__Output } from '@rebound/core';
import type { LeaderInfo } from '@rebound/ha';
import { parseTaskEvents, type TaskEvent } from '@rebound/chaos';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REBOUND = join(ROOT, 'bin/rebound.js');

export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function runRebound(args: readonly string[], timeoutMs = 120_000): Promise<CliResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [REBOUND, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

async function reboundOk(args: readonly string[], timeoutMs?: number): Promise<CliResult> {
  const r = await runRebound(args, timeoutMs);
  if (r.code !== 0) throw new Error(`rebound ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r;
}

const defines = (config: Readonly<Record<string, string>>): string[] => Object.entries(config).flatMap(([k, v]) => ['-D', `${k}=${v}`]);

// The task lifecycle lines are parsed by the chaos harness's parser, shared with the tests.
export type { TaskEvent };

export interface KilledLeader {
  readonly id: string;
  readonly pid: number;
  readonly epoch: number;
  /** Date.now() just before the signal. */
  readonly killedAtMs: number;
}

export class BenchCluster {
  readonly haDir: string;
  private client: ClusterClient | undefined;
  private stopped = false;

  private constructor(readonly workdir: string) {
    this.haDir = ClusterPaths.haDir(workdir);
  }

  static async start(workdir: string, opts: { jobmasters: number; taskmanagers: number; slots: number; config: Readonly<Record<string, string>> }): Promise<BenchCluster> {
    const cluster = new BenchCluster(workdir);
    live.add(cluster);
    await reboundOk([
      'local', 'up', '--workdir', workdir,
      '--jobmasters', String(opts.jobmasters),
      '--taskmanagers', String(opts.taskmanagers),
      '--slots', String(opts.slots),
      '--timeout', '60 s',
      ...defines(opts.config),
    ]);
    return cluster;
  }

  /** `rebound submit --detached`; returns the job id. */
  async submit(jobFile: string, jobArgs: readonly string[]): Promise<string> {
    const r = await reboundOk(['submit', jobFile, '--json', '--detached', '--cluster', this.workdir, '--', ...jobArgs]);
    const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
    const jobId = line ? (JSON.parse(line) as { jobId?: string }).jobId : undefined;
    if (!jobId) throw new Error(`submit printed no job id: ${r.stdout}`);
    return jobId;
  }

  private async clusterClient(): Promise<ClusterClient> {
    if (!this.client) {
      const file = await readClusterFile(this.workdir);
      const target = { kind: 'cluster' as const, workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file };
      this.client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    }
    return this.client;
  }

  /** One attempt (no waiting for a failover): undefined while no leader answers. */
  async status(jobId: string): Promise<JobStatus__Output | undefined> {
    try {
      return await (await this.clusterClient()).getJobStatus(jobId, { failoverTimeoutMs: 0 });
    } catch {
      return undefined;
    }
  }

  async leader(): Promise<LeaderInfo | undefined> {
    const file = await readClusterFile(this.workdir);
    return withHaServices({ kind: 'cluster', workdir: this.workdir, haDir: resolve(this.workdir, file.haDir), file }, (ha) => ha.getLeader());
  }

  async processes(): Promise<readonly ClusterProcess[]> {
    return (await readClusterFile(this.workdir)).processes;
  }

  /** SIGKILLs the JobMaster leader.json names and waits until it is gone. */
  async killLeader(): Promise<KilledLeader> {
    const leader = await this.leader();
    if (!leader) throw new Error('no leader to kill');
    const proc = (await this.processes()).find((p) => p.role === 'jobmaster' && p.id === leader.jobmasterId);
    if (!proc || !isProcessAlive(proc.pid, proc.id)) throw new Error(`leader ${leader.jobmasterId} is not a running process of the cluster`);
    const killedAtMs = Date.now();
    if (!signalProcess(proc.pid, 'SIGKILL')) throw new Error(`cannot SIGKILL ${proc.id} (pid ${proc.pid})`);
    const deadline = Date.now() + 10_000;
    while (isProcessAlive(proc.pid, proc.id)) {
      if (Date.now() > deadline) throw new Error(`${proc.id} (pid ${proc.pid}) did not exit after SIGKILL`);
      await new Promise((r) => setTimeout(r, 5));
    }
    return { id: proc.id, pid: proc.pid, epoch: leader.epoch, killedAtMs };
  }

  /** A new standby JobMaster through `rebound local start-jobmaster`. */
  async startJobMaster(): Promise<ClusterProcess> {
    const r = await reboundOk(['local', 'start-jobmaster', '--json', '--workdir', this.workdir]);
    return JSON.parse(r.stdout) as ClusterProcess;
  }

  async taskEvents(jobId: string): Promise<TaskEvent[]> {
    const tms = (await this.processes()).filter((p) => p.role === 'taskmanager');
    const all = await Promise.all(tms.map(async (p) => parseTaskEvents(await readFile(p.logFile, 'utf8').catch(() => ''), p.id)));
    return all
      .flat()
      .filter((e) => e.jobId === jobId)
      .sort((a, b) => a.time - b.time);
  }

  /** The pino lines of a process's log (JSON objects; other lines skipped). */
  async logLines(processId: string): Promise<Record<string, unknown>[]> {
    const text = await readFile(ClusterPaths.logFile(this.workdir, processId), 'utf8').catch(() => '');
    const out: Record<string, unknown>[] = [];
    for (const line of text.split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // A line cut by a SIGKILL.
      }
    }
    return out;
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.client?.close();
    this.client = undefined;
    const r = await runRebound(['local', 'down', '--workdir', this.workdir, '--timeout', '10 s']).catch(() => ({ code: 1 }) as CliResult);
    if (r.code !== 0) this.killAllSync();
    live.delete(this);
  }

  /** SIGKILLs every process this cluster started (exit hook, failed `local down`). */
  killAllSync(): void {
    try {
      const file = JSON.parse(readFileSync(ClusterPaths.file(this.workdir), 'utf8')) as { processes?: { pid: number; id: string }[] };
      for (const p of file.processes ?? []) if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGKILL');
    } catch {
      // No cluster.json: nothing was started.
    }
  }
}

const live = new Set<BenchCluster>();
process.on('exit', () => {
  for (const c of live) c.killAllSync();
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    for (const c of live) c.killAllSync();
    process.exit(130);
  });
}
