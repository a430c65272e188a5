/**
 * Start-up benchmark of the compiled CLI and daemons (issue 24, item 3): the wall time, from spawn
 * to exit, of `rebound --help` and of `rebound status <job>` against a live local cluster, and the
 * time from a daemon's spawn to its ready line. Median of `--runs` (default 10) after one warm-up
 * run that is not counted; `node -e 0` is timed alongside as the floor of any Node process.
 *
 *   npx tsx bench/cli/run.ts [--runs N]
 *
 * Targets: --help <= 120 ms, status <= 200 ms, each daemon ready <= 500 ms, judged by the load rule
 * of bench/load.ts (every process started here carries its tag). Prints the figures and writes
 * bench/results/cli.json.
 */
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ROOT, runRebound } from '../recovery/cluster.js';
import { LoadSampler, judge, verdictText } from '../load.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '10' } } });
const RUNS = Number(values.runs);
if (!Number.isInteger(RUNS) || RUNS < 1) {
  process.stderr.write(`bench/cli: --runs ${values.runs}: expected a positive integer\n`);
  process.exit(2);
}
const BIN = join(ROOT, 'bin/rebound.js');
const TARGETS = { helpMs: 120, statusMs: 200, daemonReadyMs: 500 };

interface Figure {
  readonly medianMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  readonly runsMs: readonly number[];
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

function figure(runs: number[]): Figure {
  const s = [...runs].sort((a, b) => a - b);
  const mid = s.length / 2;
  const median = s.length % 2 ? s[Math.floor(mid)]! : (s[mid - 1]! + s[mid]!) / 2;
  return { medianMs: round1(median), minMs: round1(s[0]!), maxMs: round1(s.at(-1)!), runsMs: runs.map(round1) };
}

/** Wall time of one whole process, spawn to exit; fails unless it exits 0. */
function timeProcess(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('exit', (code) => {
      const ms = performance.now() - t0;
      if (code === 0) resolve(ms);
      else reject(new Error(`node ${args.join(' ')} exited ${code}: ${stderr.trim()}`));
    });
  });
}

async function repeat(args: readonly string[]): Promise<Figure> {
  await timeProcess(args); // warm-up: the page cache, not the figure
  const runs: number[] = [];
  for (let i = 0; i < RUNS; i++) runs.push(await timeProcess(args));
  return figure(runs);
}

/** Spawn to ready line of one daemon, read from its stdout as it comes; then SIGTERM and wait. */
function timeDaemonReady(args: readonly string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let readyMs: number | undefined;
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (readyMs === undefined && out.includes('"event":"ready"')) {
        readyMs = performance.now() - t0;
        child.kill('SIGTERM');
      }
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (readyMs !== undefined) resolve(readyMs);
      else reject(new Error(`rebound ${args[0]} exited (${signal ?? code}) before its ready line: ${err.trim()}`));
    });
  });
}

async function daemonReady(work: string, role: 'jobmaster' | 'taskmanager'): Promise<Figure> {
  const runs: number[] = [];
  for (let i = 0; i <= RUNS; i++) {
    const id = `${role}-bench-${i}`;
    // The JobMasters' own HA directory, which the TaskManagers then use too: a TaskManager wants
    // one a JobMaster has led, not a live JobMaster, to be ready (it registers after).
    // Daemons refuse to start without a secret: the one `local up` made for the cluster above.
    const secret = `security.auth.token-file=${join(work, 'cluster', 'secret')}`;
    const args = [role, '--ha-dir', join(work, 'ha'), '--id', id, '--log-file', join(work, `${id}.log`), '-D', secret];
    // Any free port: the live cluster of the status figure (and `rebound local up` anywhere on
    // this machine) holds the default ones.
    args.push(...(role === 'jobmaster' ? ['-D', 'rest.port=0', '-D', 'jobmaster.port=0'] : ['-D', 'metrics.port=0']));
    if (role === 'taskmanager') {
      const dataDir = join(work, `${id}-data`);
      await mkdir(dataDir, { recursive: true });
      args.push('--slots', '1', '--data-dir', dataDir);
    }
    const ms = await timeDaemonReady(args);
    if (i > 0) runs.push(ms); // run 0 is the warm-up
  }
  return figure(runs);
}

async function ok(args: string[]): Promise<string> {
  const r = await runRebound(args, { timeoutMs: 180_000 });
  if (r.code !== 0)
    throw new Error(`rebound ${args.join(' ')} exited ${r.code}: ${r.stderr.trim() || r.stdout.trim()}`);
  return r.stdout;
}

/** A finished job on a live one-JobMaster, one-TaskManager cluster: what `status` is asked about. */
async function finishedJob(work: string): Promise<string> {
  await ok(['local', 'up', '--workdir', work, '--jobmasters', '1', '--taskmanagers', '1', '--slots', '2']);
  const out = await ok([
    'submit',
    '--cluster',
    work,
    join(ROOT, 'test/fixtures/histogram.ts'),
    '--json',
    '--detached',
    '--',
    '--records',
    '1000',
    '--keys',
    '10',
    '--output',
    join(work, 'out'),
  ]);
  const jobId = (JSON.parse(out.split('\n')[0]!) as { jobId: string }).jobId;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = JSON.parse(await ok(['status', jobId, '--cluster', work, '--json'])) as { state?: string };
    if (status.state === 'FINISHED') return jobId;
    if (Date.now() > deadline) throw new Error(`job ${jobId} not FINISHED in 120 s (last: ${status.state})`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function main(): Promise<void> {
  // The figures are of the current sources: build first (a no-op when packages/cli/dist is fresh).
  await timeProcess([join(ROOT, 'scripts/build.mjs')]);
  const work = await mkdtemp(join(tmpdir(), 'rebound-bench-cli-'));
  const cluster = join(work, 'cluster');
  // Started first: it tags this process's environment, which the cluster's daemons then inherit.
  let sampler: LoadSampler | undefined = new LoadSampler(1_000);
  try {
    const jobId = await finishedJob(cluster);
    const nodeFloor = await repeat(['-e', '0']);
    const help = await repeat([BIN, '--help']);
    const status = await repeat([BIN, 'status', jobId, '--cluster', cluster]);
    const jobmaster = await daemonReady(work, 'jobmaster');
    const taskmanager = await daemonReady(work, 'taskmanager');
    const load = sampler.stop();
    sampler = undefined;
    const verdicts = {
      help: judge(help.medianMs <= TARGETS.helpMs, load),
      status: judge(status.medianMs <= TARGETS.statusMs, load),
      jobmasterReady: judge(jobmaster.medianMs <= TARGETS.daemonReadyMs, load),
      taskmanagerReady: judge(taskmanager.medianMs <= TARGETS.daemonReadyMs, load),
    };
    const result = {
      benchmark: 'cli',
      command: `npx tsx bench/cli/run.ts --runs ${RUNS}`,
      date: new Date().toISOString(),
      node: process.version,
      runs: RUNS,
      load,
      targetsMs: TARGETS,
      nodeFloorMs: nodeFloor,
      helpMs: help,
      statusMs: status,
      daemonReadyMs: { jobmaster, taskmanager },
      verdicts,
    };
    const line = (name: string, f: Figure, target?: number, verdict?: boolean | null): string =>
      `  ${name.padEnd(24)} median ${String(f.medianMs).padStart(7)} ms  (min ${f.minMs}, max ${f.maxMs})` +
      (target === undefined ? '' : `  target <= ${target} ms: ${verdictText(verdict ?? null, load)}`);
    process.stdout.write(
      [
        `CLI and daemon start-up, median of ${RUNS} (foreign CPU ${load.foreignCores ?? '?'} cores, load average up to ${load.max} on ${load.cores} cores)`,
        line('node -e 0', nodeFloor),
        line('rebound --help', help, TARGETS.helpMs, verdicts.help),
        line('rebound status <job>', status, TARGETS.statusMs, verdicts.status),
        line('jobmaster spawn→ready', jobmaster, TARGETS.daemonReadyMs, verdicts.jobmasterReady),
        line('taskmanager spawn→ready', taskmanager, TARGETS.daemonReadyMs, verdicts.taskmanagerReady),
        '',
      ].join('\n'),
    );
    await writeFile(join(ROOT, 'bench/results/cli.json'), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    sampler?.stop();
    await runRebound(['local', 'down', '--workdir', cluster]).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/cli: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
