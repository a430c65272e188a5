/**
 * Throughput benchmark: wordcount over generated text through a local cluster (1 JobMaster,
 * 2 TaskManagers with 1 slot each) against the same computation in one plain Node process,
 * measured in the same run so the ratio is not skewed by a noisy machine.
 *
 *   npx tsx bench/throughput/run.ts [--mb 200] [--files N] [--seed 42] [--workdir DIR]
 *                                   [--profile DIR] [--keep-cluster] [--results FILE]
 *                                   [--source-parallelism N] [-D key=value ...] [--daemon-node-options STR]
 *
 * Cluster time is the wall time of `rebound submit` (bundling, submission, scheduling, running,
 * committing; cluster start-up excluded); the job's own duration (finished - submitted, from
 * `rebound status --json`) is reported next to it. Both outputs are compared line by line.
 * `--profile DIR` samples the daemons with the inspector's CPU profiler (cpu-profiler.mjs) and leaves
 * <role>-<pid>.cpuprofile files in DIR (the `local up` CLI's own profile lands there too).
 * The last three options are for experiments against the defaults: the wordcount's --parallelism,
 * job configuration given to `submit -D`, and NODE_OPTIONS for the daemons (e.g. V8 heap flags).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { BaselineResult } from './baseline.js';
import { ensureCorpus, type Corpus } from './corpus.js';
import { LoadSampler, judge, verdictText } from '../load.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const REBOUND = join(ROOT, 'bin/rebound.js');
const MB = 1024 * 1024;
/**
 * The target of the issue: the cluster reaches at least half the single-process throughput, by
 * wall time and by CPU time (MB per CPU second of all daemons vs of the single process): a wall
 * ratio alone can be met by using more cores, or by a single process slowed by other load.
 */
const TARGET_RATIO = 0.5;

interface Options {
  mb: number;
  files: number;
  seed: number;
  vocabulary: number;
  workdir: string;
  results: string;
  profileDir: string | undefined;
  keepCluster: boolean;
  sourceParallelism: number | undefined;
  defines: string[];
  daemonNodeOptions: string | undefined;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      mb: { type: 'string', default: '200' },
      files: { type: 'string' },
      seed: { type: 'string', default: '42' },
      vocabulary: { type: 'string', default: '200000' },
      workdir: { type: 'string', default: '/tmp/rebound-bench-throughput' },
      results: { type: 'string', default: join(ROOT, 'bench/results/throughput.json') },
      profile: { type: 'string' },
      'keep-cluster': { type: 'boolean', default: false },
      'source-parallelism': { type: 'string' },
      define: { type: 'string', short: 'D', multiple: true, default: [] },
      'daemon-node-options': { type: 'string' },
    },
    strict: true,
  });
  const num = (s: string, name: string, min: number): number => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got '${s}'`);
    return n;
  };
  const mb = num(values.mb, 'mb', 1);
  return {
    mb,
    // 4 mb files: enough splits for two slots to share the work evenly, even for a quick --mb 20.
    files: Math.round(values.files === undefined ? Math.max(2, Math.ceil(mb / 4)) : num(values.files, 'files', 1)),
    seed: Math.round(num(values.seed, 'seed', 0)),
    vocabulary: Math.round(num(values.vocabulary, 'vocabulary', 100)),
    workdir: resolve(values.workdir),
    results: resolve(values.results),
    profileDir: values.profile === undefined ? undefined : resolve(values.profile),
    keepCluster: values['keep-cluster'],
    sourceParallelism: values['source-parallelism'] === undefined ? undefined : Math.round(num(values['source-parallelism'], 'source-parallelism', 1)),
    defines: values.define,
    daemonNodeOptions: values['daemon-node-options'],
  };
}

interface Exec {
  code: number;
  stdout: string;
  stderr: string;
  seconds: number;
}

function exec(cmd: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<Exec> {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolvePromise({ code: code ?? 1, stdout, stderr, seconds: (performance.now() - t0) / 1000 }));
  });
}

async function execOk(cmd: string, args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Exec> {
  const r = await exec(cmd, args, env);
  if (r.code !== 0) throw new Error(`${[cmd, ...args].join(' ')} exited ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r;
}

function rebound(args: readonly string[], env?: NodeJS.ProcessEnv): Promise<Exec> {
  return execOk(process.execPath, [REBOUND, ...args], env);
}

/** The JSON objects a `--json` command printed, one a line. */
function jsonLines(stdout: string): Record<string, unknown>[] {
  return stdout
    .split('\n')
    .filter((l) => l.trim().startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

interface BaselineRun extends BaselineResult {
  /** Process wall time, start-up included (as the cluster's submit time includes the CLI's). */
  readonly wallSeconds: number;
}

async function runBaseline(corpus: Corpus, outputFile: string): Promise<BaselineRun> {
  const r = await execOk(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/throughput/baseline.ts'), '--input', corpus.dir, '--output', outputFile]);
  const [result] = jsonLines(r.stdout) as unknown as BaselineResult[];
  if (!result) throw new Error(`baseline printed no result:\n${r.stdout}\n${r.stderr}`);
  return { ...result, wallSeconds: r.seconds };
}

interface VertexJson {
  name: string;
  parallelism: number;
  recordsIn: number;
  recordsOut: number;
  bytesProduced: number;
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

async function clockTicksPerSecond(): Promise<number> {
  const r = await exec('getconf', ['CLK_TCK']).catch(() => undefined);
  const n = Number(r?.stdout.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
}

interface DaemonProcess {
  id: string;
  role: string;
  pid: number;
}

/** CPU seconds each daemon of the cluster has used so far, by daemon id. */
function daemonCpu(daemons: readonly DaemonProcess[], ticks: number): Map<string, number | undefined> {
  return new Map(daemons.map((d) => [d.id, processCpuSeconds(d.pid, ticks)]));
}

interface ClusterRun {
  readonly startupSeconds: number;
  /** CPU seconds the daemons used during the submit, by daemon id (Linux only). */
  readonly cpuSecondsByDaemon: Readonly<Record<string, number>>;
  readonly submitSeconds: number;
  readonly jobSeconds: number;
  readonly jobId: string;
  readonly restarts: number;
  readonly vertices: readonly VertexJson[];
}

async function runCluster(opts: Options, corpus: Corpus, outputDir: string): Promise<ClusterRun> {
  const clusterDir = join(opts.workdir, 'cluster');
  rmSync(clusterDir, { recursive: true, force: true });
  const env = { ...process.env };
  if (opts.daemonNodeOptions) env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} ${opts.daemonNodeOptions}`.trim();
  if (opts.profileDir) {
    mkdirSync(opts.profileDir, { recursive: true });
    // Only the daemons are profiled: `local up` hands its environment to the processes it spawns.
    env.NODE_OPTIONS = `${env.NODE_OPTIONS ?? ''} --import ${join(ROOT, 'bench/throughput/cpu-profiler.mjs')}`.trim();
    env.REBOUND_BENCH_PROFILE_DIR = opts.profileDir;
  }
  const up = await rebound(['local', 'up', '--workdir', clusterDir, '--jobmasters', '1', '--taskmanagers', '2', '--slots', '1'], env);
  try {
    const daemons = (JSON.parse(readFileSync(join(clusterDir, 'cluster.json'), 'utf8')) as { processes: DaemonProcess[] }).processes;
    const ticks = await clockTicksPerSecond();
    const cpuBefore = daemonCpu(daemons, ticks);
    // Poll the job often so the end of the job is noticed within ~100 ms, not the default 500.
    const submit = await rebound([
      'submit',
      'examples/wordcount.ts',
      '--cluster',
      clusterDir,
      '--json',
      '--poll-interval',
      '100',
      ...opts.defines.flatMap((d) => ['-D', d]),
      '--',
      '--input',
      corpus.dir,
      '--output',
      outputDir,
      ...(opts.sourceParallelism === undefined ? [] : ['--parallelism', String(opts.sourceParallelism)]),
    ]);
    const jobId = jsonLines(submit.stdout).map((o) => o.jobId).find((id): id is string => typeof id === 'string');
    if (!jobId) throw new Error(`submit printed no job id:\n${submit.stdout}`);
    const cpuAfter = daemonCpu(daemons, ticks);
    const cpuSecondsByDaemon: Record<string, number> = {};
    for (const [id, after] of cpuAfter) {
      const before = cpuBefore.get(id);
      if (after !== undefined && before !== undefined) cpuSecondsByDaemon[id] = after - before;
    }
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
      cpuSecondsByDaemon,
      submitSeconds: submit.seconds,
      jobSeconds: (status.finishedAtMs - status.submittedAtMs) / 1000,
      jobId,
      restarts: status.restarts,
      vertices: status.vertices,
    };
  } finally {
    if (!opts.keepCluster) await rebound(['local', 'down', '--workdir', clusterDir]);
  }
}

/** `word<TAB>count` lines of a file or of a directory's part files, in a map; duplicates are errors. */
function readCounts(paths: readonly string[]): Map<string, string> {
  const counts = new Map<string, string>();
  for (const p of paths) {
    for (const line of readFileSync(p, 'utf8').split('\n')) {
      if (line === '') continue;
      const tab = line.lastIndexOf('\t');
      const word = line.slice(0, tab);
      if (counts.has(word)) throw new Error(`word '${word}' appears twice in the output of ${p}`);
      counts.set(word, line.slice(tab + 1));
    }
  }
  return counts;
}

interface Verification {
  readonly identical: boolean;
  readonly distinctWords: number;
  readonly detail: string;
}

function verify(baselineFile: string, clusterDir: string): Verification {
  const expected = readCounts([baselineFile]);
  const parts = readdirSync(clusterDir)
    .filter((n) => n.startsWith('part-'))
    .map((n) => join(clusterDir, n));
  const actual = readCounts(parts);
  const problems: string[] = [];
  for (const [w, c] of expected) {
    const got = actual.get(w);
    if (got !== c) problems.push(`${JSON.stringify(w)}: expected ${c}, cluster ${got ?? 'missing'}`);
  }
  for (const w of actual.keys()) if (!expected.has(w)) problems.push(`${JSON.stringify(w)}: only in the cluster output`);
  return {
    identical: problems.length === 0,
    distinctWords: expected.size,
    detail: problems.length === 0 ? `${expected.size} words, ${parts.length} part files` : `${problems.length} differences, e.g. ${problems.slice(0, 5).join('; ')}`,
  };
}

function table(rows: readonly (readonly string[])[]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ')).join('\n');
}

const f2 = (n: number): string => n.toFixed(2);

async function main(): Promise<void> {
  const opts = parseOptions();
  const loadAtStart = loadavg()[0]!;
  const sampler = new LoadSampler();
  mkdirSync(opts.workdir, { recursive: true });
  const log = (msg: string): void => void process.stderr.write(`[throughput] ${msg}\n`);

  const corpus = ensureCorpus({
    dir: join(opts.workdir, `input-${opts.mb}mb-${opts.files}f-s${opts.seed}-v${opts.vocabulary}`),
    totalBytes: Math.round(opts.mb * MB),
    files: opts.files,
    seed: opts.seed,
    vocabulary: opts.vocabulary,
    zipfExponent: 1.0,
  });
  const mb = corpus.bytes / MB;
  log(`input: ${f2(mb)} MB in ${corpus.files.length} files, ${corpus.lines} lines (${corpus.reused ? 'reused' : `generated in ${f2(corpus.generateSeconds)} s`})`);

  const baselineOut = join(opts.workdir, 'out-baseline.txt');
  const clusterOut = join(opts.workdir, 'out-cluster');
  rmSync(baselineOut, { force: true });
  rmSync(clusterOut, { recursive: true, force: true });

  log('single process ...');
  const base = await runBaseline(corpus, baselineOut);
  log(`single process: ${f2(base.wallSeconds)} s wall, ${f2(base.seconds)} s counting, ${base.words} words, ${base.distinct} distinct`);
  if (base.bytes !== corpus.bytes) throw new Error(`baseline read ${base.bytes} bytes, the corpus has ${corpus.bytes}`);

  log('cluster (1 JobMaster, 2 TaskManagers x 1 slot) ...');
  const cluster = await runCluster(opts, corpus, clusterOut);
  log(`cluster: up in ${f2(cluster.startupSeconds)} s, submit ${f2(cluster.submitSeconds)} s, job ${f2(cluster.jobSeconds)} s`);

  const check = verify(baselineOut, clusterOut);
  log(`outputs ${check.identical ? 'identical' : 'DIFFER'}: ${check.detail}`);

  const baseMbs = mb / base.wallSeconds;
  const clusterMbs = mb / cluster.submitSeconds;
  const ratio = clusterMbs / baseMbs;
  const ratioJob = base.seconds / cluster.jobSeconds;
  const daemonCpu = Object.values(cluster.cpuSecondsByDaemon);
  const clusterCpu = daemonCpu.length > 0 ? daemonCpu.reduce((a, b) => a + b, 0) : undefined;
  // Throughput per CPU second is what a shared, noisy machine distorts least.
  const cpuEfficiency = clusterCpu === undefined ? undefined : (mb / clusterCpu) / (mb / base.cpuSeconds);
  const cpuCell = (cpu: number | undefined): string => (cpu === undefined ? '-' : f2(cpu));
  const rows = [
    ['run', 'MB', 'seconds', 'MB/s', 'ratio', 'CPU s'],
    ['single process (wall)', f2(mb), f2(base.wallSeconds), f2(baseMbs), '1.00', '-'],
    ['cluster 2 TM x 1 slot (submit wall)', f2(mb), f2(cluster.submitSeconds), f2(clusterMbs), f2(ratio), cpuCell(clusterCpu)],
    ['single process (counting only)', f2(mb), f2(base.seconds), f2(mb / base.seconds), '1.00', f2(base.cpuSeconds)],
    ['cluster (job duration)', f2(mb), f2(cluster.jobSeconds), f2(mb / cluster.jobSeconds), f2(ratioJob), '-'],
  ];
  process.stdout.write(`${table(rows)}\n`);
  const load = sampler.stop();
  const wallMet = ratio >= TARGET_RATIO;
  const cpuMet = cpuEfficiency !== undefined && cpuEfficiency >= TARGET_RATIO;
  const targetMet = judge(wallMet && cpuMet, load);
  process.stdout.write(
    `ratio by wall time ${f2(ratio)}, by CPU time ${cpuEfficiency === undefined ? '-' : f2(cpuEfficiency)} (target >= ${TARGET_RATIO} for both): ` +
      `${verdictText(targetMet, load)}; outputs ${check.identical ? 'identical' : 'DIFFER'}\n`,
  );
  const loadAtEnd = loadavg()[0]!;
  if (Math.max(loadAtStart, loadAtEnd) > availableParallelism()) {
    // Other processes competed for the cores: wall-clock ratios are distorted, CPU seconds much less.
    process.stdout.write(`warning: load average ${f2(loadAtStart)} -> ${f2(loadAtEnd)} on ${availableParallelism()} cores; compare the CPU line, not only the wall ratio\n`);
  }
  if (clusterCpu !== undefined) {
    const perDaemon = Object.entries(cluster.cpuSecondsByDaemon).map(([id, s]) => `${id} ${f2(s)}`).join(', ');
    process.stdout.write(`CPU: cluster daemons ${f2(clusterCpu)} s (${perDaemon}) vs single process ${f2(base.cpuSeconds)} s: ${f2(cpuEfficiency!)}x the MB per CPU second\n`);
  }

  const results = {
    benchmark: 'throughput',
    description: 'wordcount: cluster (1 JobMaster, 2 TaskManagers x 1 slot) vs one plain Node process, same run',
    measuredAt: new Date().toISOString(),
    machine: { cpus: availableParallelism(), cpuModel: cpus()[0]?.model ?? 'unknown', totalMemMb: Math.round(totalmem() / MB), node: process.version, loadAverage1m: { atStart: loadAtStart, atEnd: loadAtEnd, max: load.max, samples: load.samples } },
    input: {
      mb: Number(f2(mb)),
      bytes: corpus.bytes,
      files: corpus.files.length,
      lines: corpus.lines,
      words: base.words,
      distinctWords: base.distinct,
      seed: opts.seed,
      vocabulary: opts.vocabulary,
      zipfExponent: 1.0,
    },
    singleProcess: { wallSeconds: base.wallSeconds, countingSeconds: base.seconds, countingCpuSeconds: base.cpuSeconds, mbPerSecond: baseMbs },
    cluster: {
      jobmasters: 1,
      taskmanagers: 2,
      slotsPerTaskManager: 1,
      startupSeconds: cluster.startupSeconds,
      submitSeconds: cluster.submitSeconds,
      jobSeconds: cluster.jobSeconds,
      mbPerSecond: clusterMbs,
      daemonCpuSeconds: clusterCpu ?? null,
      daemonCpuSecondsById: cluster.cpuSecondsByDaemon,
      jobId: cluster.jobId,
      restarts: cluster.restarts,
      vertices: cluster.vertices.map((v) => ({ name: v.name, parallelism: v.parallelism, recordsIn: v.recordsIn, recordsOut: v.recordsOut, bytesProduced: v.bytesProduced })),
      profiled: opts.profileDir !== undefined,
      sourceParallelism: opts.sourceParallelism ?? 'default (one subtask per split)',
      jobConfig: opts.defines,
      daemonNodeOptions: opts.daemonNodeOptions ?? '',
    },
    ratio,
    ratioJobDurationVsCounting: ratioJob,
    cpuEfficiencyVsSingleProcess: cpuEfficiency ?? null,
    targetRatio: TARGET_RATIO,
    wallRatioAtTarget: wallMet,
    cpuRatioAtTarget: cpuMet,
    maxLoadForTarget: load.maxLoadForTargets,
    // null: not judged, the load average went above maxLoadForTarget during the measurement.
    targetMet,
    outputsIdentical: check.identical,
    verification: check.detail,
  };
  mkdirSync(dirname(opts.results), { recursive: true });
  writeFileSync(opts.results, `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${opts.results}`);
  if (!check.identical) process.exitCode = 1;
}

await main();
