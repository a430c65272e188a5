/**
 * One measured cluster run for the throughput benchmark: a fresh local cluster (1 JobMaster,
 * 2 TaskManagers x 1 slot), one `rebound submit` of examples/wordcount.ts, then each daemon's CPU
 * seconds during the submit and its peak RSS (a fresh cluster per run, so the peak is this run's).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT, describeResult, runRebound } from '@rebound/cli/testing';

export const ROOT = REPO_ROOT;

export interface Exec {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

export function exec(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Exec> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) =>
      resolvePromise({ code: code ?? 1, stdout, stderr, seconds: (performance.now() - t0) / 1000 }),
    );
  });
}

export async function execOk(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Exec> {
  const r = await exec(cmd, args, env);
  if (r.code !== 0) throw new Error(`${[cmd, ...args].join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** `rebound ARGS` through the cluster driver's runner, timed; a non-zero exit throws. */
async function rebound(args: readonly string[], env?: Readonly<Record<string, string>>): Promise<Exec> {
  const t0 = performance.now();
  const r = await runRebound(args, { env, timeoutMs: 30 * 60_000 });
  if (r.code !== 0) throw new Error(describeResult(args, r));
  return { code: 0, stdout: r.stdout, stderr: r.stderr, seconds: (performance.now() - t0) / 1000 };
}

/** The JSON objects a `--json` command printed, one a line. */
export function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** Cumulative user + system CPU seconds of a process (Linux /proc), undefined where unavailable. */
function processCpuSeconds(pid: number, ticksPerSecond: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name (which may contain spaces): utime, stime are 14, 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** Peak resident set (VmHWM) of a live process in MB, undefined where unavailable. */
function peakRssMb(pid: number): number | undefined {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

let ticks: number | undefined;
async function clockTicksPerSecond(): Promise<number> {
  if (ticks !== undefined) return ticks;
  const r = await exec('getconf', ['CLK_TCK']).catch(() => undefined);
  const n = Number(r?.stdout.trim());
  ticks = Number.isFinite(n) && n > 0 ? n : 100;
  return ticks;
}

interface DaemonProcess {
  id: string;
  role: string;
  pid: number;
}

export interface VertexJson {
  name: string;
  parallelism: number;
  recordsIn: number;
  recordsOut: number;
  bytesProduced: number;
}

export interface DaemonFigures {
  readonly role: string;
  /** CPU seconds during the submit (Linux only). */
  readonly cpuSeconds: number | null;
  /** Peak RSS over the daemon's life (one fresh cluster per run). */
  readonly peakRssMb: number | null;
}

export interface ClusterRun {
  readonly startupSeconds: number;
  readonly submitSeconds: number;
  readonly jobSeconds: number;
  readonly jobId: string;
  readonly restarts: number;
  readonly daemons: Readonly<Record<string, DaemonFigures>>;
  /** Sum of the daemons' CPU seconds, null where /proc is unavailable. */
  readonly cpuSeconds: number | null;
  readonly vertices: readonly VertexJson[];
}

export interface ClusterRunOptions {
  readonly workdir: string;
  readonly inputDir: string;
  readonly outputDir: string;
  readonly sourceParallelism?: number | undefined;
  readonly defines: readonly string[];
  readonly daemonNodeOptions?: string | undefined;
  /** Samples the daemons with the inspector's CPU profiler into this directory (cpu-profiler.mjs). */
  readonly profileDir?: string | undefined;
  readonly keepCluster?: boolean;
  /** `local up --shuffle-workers`: with any, the job runs on the remote shuffle. */
  readonly shuffleWorkers?: number;
}

export async function runCluster(o: ClusterRunOptions): Promise<ClusterRun> {
  const clusterDir = join(o.workdir, 'cluster');
  rmSync(clusterDir, { recursive: true, force: true });
  rmSync(o.outputDir, { recursive: true, force: true });
  const env: Record<string, string> = {};
  if (o.daemonNodeOptions) env.NODE_OPTIONS = `${process.env.NODE_OPTIONS ?? ''} ${o.daemonNodeOptions}`.trim();
  if (o.profileDir) {
    mkdirSync(o.profileDir, { recursive: true });
    // Only the daemons are profiled: `local up` hands its environment to the processes it spawns.
    env.NODE_OPTIONS =
      `${env.NODE_OPTIONS ?? process.env.NODE_OPTIONS ?? ''} --import ${join(ROOT, 'bench/throughput/cpu-profiler.mjs')}`.trim();
    env.REBOUND_BENCH_PROFILE_DIR = o.profileDir;
  }
  const up = await rebound(
    [
      'local',
      'up',
      '--workdir',
      clusterDir,
      '--jobmasters',
      '1',
      '--taskmanagers',
      '2',
      '--slots',
      '1',
      ...(o.shuffleWorkers ? ['--shuffle-workers', String(o.shuffleWorkers)] : []),
    ],
    env,
  );
  try {
    const daemons = (
      JSON.parse(readFileSync(join(clusterDir, 'cluster.json'), 'utf8')) as { processes: DaemonProcess[] }
    ).processes;
    const hz = await clockTicksPerSecond();
    const before = new Map(daemons.map((d) => [d.id, processCpuSeconds(d.pid, hz)]));
    // Poll the job often so the end of the job is noticed within ~100 ms, not the default 500.
    const submit = await rebound([
      'submit',
      'examples/wordcount.ts',
      '--cluster',
      clusterDir,
      '--json',
      '--poll-interval',
      '100',
      ...o.defines.flatMap((d) => ['-D', d]),
      '--',
      '--input',
      o.inputDir,
      '--output',
      o.outputDir,
      ...(o.sourceParallelism === undefined ? [] : ['--parallelism', String(o.sourceParallelism)]),
    ]);
    const figures: Record<string, DaemonFigures> = {};
    let total: number | null = 0;
    for (const d of daemons) {
      const a = processCpuSeconds(d.pid, hz);
      const b = before.get(d.id);
      const cpu = a !== undefined && b !== undefined ? a - b : null;
      total = cpu === null || total === null ? null : total + cpu;
      figures[d.id] = { role: d.role, cpuSeconds: cpu, peakRssMb: peakRssMb(d.pid) ?? null };
    }
    const jobId = jsonLines(submit.stdout)
      .map((j) => j.jobId)
      .find((id): id is string => typeof id === 'string');
    if (!jobId) throw new Error(`submit printed no job id:\n${submit.stdout}`);
    const status = jsonLines((await rebound(['status', jobId, '--cluster', clusterDir, '--json'])).stdout)[0] as {
      state: string;
      submittedAtMs: number;
      finishedAtMs: number;
      restarts: number;
      vertices: VertexJson[];
    };
    if (status.state !== 'FINISHED') throw new Error(`job ${jobId} is ${status.state}`);
    return {
      startupSeconds: up.seconds,
      submitSeconds: submit.seconds,
      jobSeconds: (status.finishedAtMs - status.submittedAtMs) / 1000,
      jobId,
      restarts: status.restarts,
      daemons: figures,
      cpuSeconds: total,
      vertices: status.vertices.map((v) => ({
        name: v.name,
        parallelism: v.parallelism,
        recordsIn: v.recordsIn,
        recordsOut: v.recordsOut,
        bytesProduced: v.bytesProduced,
      })),
    };
  } finally {
    if (!o.keepCluster) await rebound(['local', 'down', '--workdir', clusterDir]);
  }
}
