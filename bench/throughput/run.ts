/**
 * Throughput benchmark (issue 13): wordcount through a local cluster (1 JobMaster, 2 TaskManagers
 * with 1 slot each, examples/wordcount.ts, `rebound submit` to finished) against one plain Node
 * process doing the same count the obvious way (baseline.mjs), on two generated Zipf corpora:
 * "large" (300,000-word vocabulary, 126 MB) and "small" (3,300 words, 90 MB). Rounds alternate
 * the order of the two contestants; the ratio is the median over the rounds, outputs are compared
 * exactly every round. Afterwards one extra, untimed cluster run on the large corpus is profiled
 * and each daemon's top functions by self time are written next to the results.
 *
 *   npx tsx bench/throughput/run.ts [--mb 126] [--small-mb 90] [--rounds 3] [--corpora large,small]
 *        [--vocabulary 300000] [--small-vocabulary 3300] [--seed 42] [--workdir DIR] [--results FILE]
 *        [--no-profile] [--source-parallelism N] [-D key=value ...] [--daemon-node-options STR]
 *
 * Figures: wall seconds (process start-up included on both sides), CPU seconds per input MB of
 * each process (the daemons' from /proc, summed: a noisy machine distorts them much less than wall
 * time), peak RSS per process, the load average (targets are not judged above one per core).
 * Writes FILE (JSON) and FILE with .md (a summary with the profile), default bench/results/throughput.*.
 */
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureCorpus, type Corpus } from './corpus.js';
import { ROOT, execOk, jsonLines, runCluster, type ClusterRun } from './cluster.js';
import { summarise, type CpuProfile } from './profile-summary.js';
import { markdownReport } from './report.js';
import { verify } from './verify.js';
import type { BaselineRun, CorpusResult, RoundResult } from './results.js';
import { LoadSampler, judge, verdictText } from '../load.js';

const MB = 1024 * 1024;
/** The issue's targets: wall ratio on the large corpus, and cluster CPU per MB within 1.5x. */
export const TARGET_RATIO = 1.2;
export const TARGET_CPU_FACTOR = 1.5;

interface CorpusChoice {
  readonly name: 'large' | 'small';
  readonly mb: number;
  readonly vocabulary: number;
}

interface Options {
  corpora: CorpusChoice[];
  rounds: number;
  seed: number;
  workdir: string;
  results: string;
  profile: boolean;
  sourceParallelism: number | undefined;
  defines: string[];
  daemonNodeOptions: string | undefined;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      mb: { type: 'string', default: '126' },
      'small-mb': { type: 'string', default: '90' },
      rounds: { type: 'string', default: '3' },
      corpora: { type: 'string', default: 'large,small' },
      vocabulary: { type: 'string', default: '300000' },
      'small-vocabulary': { type: 'string', default: '3300' },
      seed: { type: 'string', default: '42' },
      workdir: { type: 'string', default: '/tmp/rebound-bench-throughput' },
      results: { type: 'string', default: join(ROOT, 'bench/results/throughput.json') },
      'no-profile': { type: 'boolean', default: false },
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
  const all: CorpusChoice[] = [
    { name: 'large', mb: num(values.mb, 'mb', 0.1), vocabulary: Math.round(num(values.vocabulary, 'vocabulary', 100)) },
    {
      name: 'small',
      mb: num(values['small-mb'], 'small-mb', 0.1),
      vocabulary: Math.round(num(values['small-vocabulary'], 'small-vocabulary', 100)),
    },
  ];
  const names = values.corpora.split(',').map((s) => s.trim());
  for (const n of names)
    if (n !== 'large' && n !== 'small') throw new Error(`--corpora takes large and/or small, got '${n}'`);
  return {
    corpora: all.filter((c) => names.includes(c.name)),
    rounds: Math.round(num(values.rounds, 'rounds', 1)),
    seed: Math.round(num(values.seed, 'seed', 0)),
    workdir: resolve(values.workdir),
    results: resolve(values.results),
    profile: !values['no-profile'],
    sourceParallelism:
      values['source-parallelism'] === undefined
        ? undefined
        : Math.round(num(values['source-parallelism'], 'source-parallelism', 1)),
    defines: values.define,
    daemonNodeOptions: values['daemon-node-options'],
  };
}

async function runBaseline(corpus: Corpus, outputFile: string): Promise<BaselineRun> {
  rmSync(outputFile, { force: true });
  const r = await execOk(process.execPath, [
    join(ROOT, 'bench/throughput/baseline.mjs'),
    '--input',
    corpus.dir,
    '--output',
    outputFile,
  ]);
  const [result] = jsonLines(r.stdout) as unknown as Omit<BaselineRun, 'wallSeconds'>[];
  if (!result) throw new Error(`baseline printed no result:\n${r.stdout}\n${r.stderr}`);
  if (result.bytes !== corpus.bytes)
    throw new Error(`baseline read ${result.bytes} bytes, the corpus has ${corpus.bytes}`);
  return { ...result, wallSeconds: r.seconds };
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const f2 = (n: number): string => n.toFixed(2);
const log = (msg: string): void => void process.stderr.write(`[throughput] ${msg}\n`);

async function main(): Promise<void> {
  const opts = parseOptions();
  mkdirSync(opts.workdir, { recursive: true });
  const corpora = opts.corpora.map((c) => {
    // 4 MB files: enough splits for two slots to share the work evenly, even for a small corpus.
    const files = Math.max(2, Math.ceil(c.mb / 4));
    const corpus = ensureCorpus({
      dir: join(opts.workdir, `input-${c.mb}mb-${files}f-s${opts.seed}-v${c.vocabulary}`),
      totalBytes: Math.round(c.mb * MB),
      files,
      seed: opts.seed,
      vocabulary: c.vocabulary,
      zipfExponent: 1.0,
    });
    log(
      `${c.name}: ${f2(corpus.bytes / MB)} MB in ${corpus.files.length} files (${corpus.reused ? 'reused' : `generated in ${f2(corpus.generateSeconds)} s`})`,
    );
    return { choice: c, corpus };
  });
  const sampler = new LoadSampler();
  const clusterOpts = {
    workdir: opts.workdir,
    sourceParallelism: opts.sourceParallelism,
    defines: opts.defines,
    daemonNodeOptions: opts.daemonNodeOptions,
  };
  const results: CorpusResult[] = [];
  for (const { choice, corpus } of corpora) {
    const mb = corpus.bytes / MB;
    const rounds: RoundResult[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const baselineOut = join(opts.workdir, 'out-baseline.txt');
      const clusterOut = join(opts.workdir, 'out-cluster');
      const order = round % 2 === 1 ? 'baseline-first' : 'cluster-first';
      let baseline: BaselineRun | undefined;
      let cluster: ClusterRun | undefined;
      for (const who of order === 'baseline-first' ? ['baseline', 'cluster'] : ['cluster', 'baseline']) {
        if (who === 'baseline') baseline = await runBaseline(corpus, baselineOut);
        else cluster = await runCluster({ ...clusterOpts, inputDir: corpus.dir, outputDir: clusterOut });
      }
      const check = verify(baselineOut, clusterOut);
      const ratio = baseline!.wallSeconds / cluster!.submitSeconds;
      rounds.push({
        round,
        order,
        baseline: baseline!,
        cluster: cluster!,
        ratio,
        outputsIdentical: check.identical,
        verification: check.detail,
      });
      log(
        `${choice.name} round ${round}: single process ${f2(baseline!.wallSeconds)} s (CPU ${f2(baseline!.cpuSeconds)}), ` +
          `cluster ${f2(cluster!.submitSeconds)} s (job ${f2(cluster!.jobSeconds)}, CPU ${cluster!.cpuSeconds === null ? '-' : f2(cluster!.cpuSeconds)}), ` +
          `ratio ${f2(ratio)}, outputs ${check.identical ? 'identical' : `DIFFER: ${check.detail}`}`,
      );
    }
    const baseCpu = median(rounds.map((r) => r.baseline.cpuSeconds)) / mb;
    const clusterCpus = rounds.map((r) => r.cluster.cpuSeconds);
    const clusterCpu = clusterCpus.every((c) => c !== null) ? median(clusterCpus as number[]) / mb : null;
    const peakRssMb: Record<string, number | null> = {
      'single process': Math.max(...rounds.map((r) => r.baseline.peakRssMb)),
    };
    for (const id of Object.keys(rounds[0]!.cluster.daemons)) {
      const peaks = rounds.map((r) => r.cluster.daemons[id]?.peakRssMb ?? null);
      peakRssMb[id] = peaks.every((p) => p !== null) ? Math.max(...(peaks as number[])) : null;
    }
    const b = rounds[0]!.baseline;
    results.push({
      name: choice.name,
      input: {
        mb: Number(f2(mb)),
        bytes: corpus.bytes,
        files: corpus.files.length,
        lines: corpus.lines,
        words: b.words,
        distinctWords: b.distinct,
        vocabulary: choice.vocabulary,
        zipfExponent: 1.0,
        seed: opts.seed,
      },
      rounds,
      medianRatio: median(rounds.map((r) => r.ratio)),
      baselineCpuSecondsPerMb: baseCpu,
      clusterCpuSecondsPerMb: clusterCpu,
      cpuFactor: clusterCpu === null ? null : clusterCpu / baseCpu,
      peakRssMb,
      outputsIdentical: rounds.every((r) => r.outputsIdentical),
    });
  }
  const load = sampler.stop();

  // The profile: one more cluster run on the first corpus, not timed (the profiler costs CPU).
  let profiles: { file: string; summary: string[] }[] = [];
  const profileDir = join(opts.workdir, 'profile');
  if (opts.profile && corpora.length > 0) {
    rmSync(profileDir, { recursive: true, force: true });
    log(`profiling one more cluster run on the ${corpora[0]!.choice.name} corpus ...`);
    await runCluster({
      ...clusterOpts,
      inputDir: corpora[0]!.corpus.dir,
      outputDir: join(opts.workdir, 'out-cluster'),
      profileDir,
    });
    profiles = readdirSync(profileDir)
      .filter((n) => n.endsWith('.cpuprofile') && !n.startsWith('local-'))
      .sort()
      .map((n) => ({
        file: n,
        summary: summarise(JSON.parse(readFileSync(join(profileDir, n), 'utf8')) as CpuProfile, 15),
      }));
  }

  const large = results.find((r) => r.name === 'large');
  const wallMet = large !== undefined && large.medianRatio >= TARGET_RATIO;
  const cpuMet = large?.cpuFactor != null && large.cpuFactor <= TARGET_CPU_FACTOR;
  const outputsIdentical = results.every((r) => r.outputsIdentical);
  const targetMet = large === undefined ? null : judge(wallMet && cpuMet && outputsIdentical, load);
  const doc = {
    benchmark: 'throughput',
    description:
      'wordcount: cluster (1 JobMaster, 2 TaskManagers x 1 slot, rebound submit to finished) vs one plain Node process (baseline.mjs), alternating rounds in one run',
    measuredAt: new Date().toISOString(),
    command: `npx tsx bench/throughput/run.ts ${process.argv.slice(2).join(' ')}`.trim(),
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      totalMemMb: Math.round(totalmem() / MB),
      node: process.version,
    },
    load,
    settings: {
      rounds: opts.rounds,
      sourceParallelism: opts.sourceParallelism ?? 'default',
      jobConfig: opts.defines,
      daemonNodeOptions: opts.daemonNodeOptions ?? '',
    },
    targets: {
      ratioAtLeast: TARGET_RATIO,
      cpuFactorAtMost: TARGET_CPU_FACTOR,
      judgedOn: 'large',
      maxLoad: load.maxLoadForTargets,
    },
    // null: not judged (no large corpus, or the load average went above one per core).
    targetMet,
    outputsIdentical,
    corpora: results,
    profile: profiles,
  };
  mkdirSync(dirname(opts.results), { recursive: true });
  writeFileSync(opts.results, `${JSON.stringify(doc, null, 2)}\n`);
  const md = markdownReport(doc, verdictText(targetMet, load));
  const mdFile = opts.results.replace(/\.json$/, '') + '.md';
  writeFileSync(mdFile, md);
  process.stdout.write(md);
  log(`wrote ${opts.results} and ${mdFile}`);
  if (!outputsIdentical) process.exitCode = 1;
}

await main();
