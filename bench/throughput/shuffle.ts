/**
 * Remote shuffle against TaskManager shuffle (issue 22, item 8): wordcount through a local cluster
 * (1 JobMaster, 2 TaskManagers with 1 slot each, examples/wordcount.ts) on the large Zipf corpus,
 * once with each partition kept by the TaskManager that produced it, once with 1 shuffle worker
 * and once with 2 (shuffle.type remote, 1 replica), in rounds that rotate the order. Every run's
 * output is compared exactly with a plain Node count of the corpus (baseline.mjs). The goal:
 * remote wall time at most 1.3x TaskManager shuffle's (median over the rounds, one run of this
 * script, judged by the load rule of bench/load.ts).
 *
 *   npx tsx bench/throughput/shuffle.ts [--mb 126] [--vocabulary 300000] [--rounds 3] [--seed 42]
 *        [--workdir DIR] [--results FILE]
 *
 * Writes FILE (JSON; default bench/results/throughput-shuffle.json) and prints a summary.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { LoadSampler, judge, verdictText } from '../load.js';
import { ROOT, execOk, jsonLines, runCluster } from './cluster.js';
import { ensureCorpus } from './corpus.js';
import { verify } from './verify.js';

const MB = 1024 * 1024;
export const TARGET_REMOTE_RATIO = 1.3;

const CONTESTANTS = [
  { name: 'taskmanager', shuffleWorkers: 0 },
  { name: 'remote-1-worker', shuffleWorkers: 1 },
  { name: 'remote-2-workers', shuffleWorkers: 2 },
] as const;

interface Run {
  readonly contestant: string;
  readonly round: number;
  readonly jobSeconds: number;
  readonly submitSeconds: number;
  readonly cpuSeconds: number | null;
  readonly identical: boolean;
  readonly detail: string;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const log = (msg: string): void => void process.stderr.write(`[shuffle] ${msg}\n`);

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      mb: { type: 'string', default: '126' },
      vocabulary: { type: 'string', default: '300000' },
      rounds: { type: 'string', default: '3' },
      seed: { type: 'string', default: '42' },
      workdir: { type: 'string', default: '/tmp/rebound-bench-shuffle' },
      results: { type: 'string', default: join(ROOT, 'bench/results/throughput-shuffle.json') },
    },
    strict: true,
  });
  const mb = Number(values.mb);
  const rounds = Math.round(Number(values.rounds));
  const seed = Math.round(Number(values.seed));
  const vocabulary = Math.round(Number(values.vocabulary));
  if (!(mb > 0) || !(rounds >= 1) || !(vocabulary >= 100) || !Number.isFinite(seed)) {
    throw new Error('--mb > 0, --rounds >= 1, --vocabulary >= 100 and a numeric --seed, please');
  }
  const workdir = resolve(values.workdir);
  mkdirSync(workdir, { recursive: true });
  const files = Math.max(2, Math.ceil(mb / 4));
  const corpus = ensureCorpus({
    dir: join(workdir, `input-${mb}mb-${files}f-s${seed}-v${vocabulary}`),
    totalBytes: Math.round(mb * MB),
    files,
    seed,
    vocabulary,
    zipfExponent: 1.0,
  });
  const expected = join(workdir, 'baseline.tsv');
  rmSync(expected, { force: true });
  const base = await execOk(process.execPath, [
    join(ROOT, 'bench/throughput/baseline.mjs'),
    '--input',
    corpus.dir,
    '--output',
    expected,
  ]);
  if (jsonLines(base.stdout).length === 0) throw new Error(`baseline printed no result:\n${base.stderr}`);
  log(`${(corpus.bytes / MB).toFixed(1)} MB in ${corpus.files.length} files; baseline ${base.seconds.toFixed(2)} s`);

  const sampler = new LoadSampler();
  const runs: Run[] = [];
  for (let round = 1; round <= rounds; round++) {
    const order = CONTESTANTS.map((_, i) => CONTESTANTS[(i + round - 1) % CONTESTANTS.length]!);
    for (const c of order) {
      const outputDir = join(workdir, `out-${c.name}`);
      const r = await runCluster({
        workdir,
        inputDir: corpus.dir,
        outputDir,
        defines: [],
        shuffleWorkers: c.shuffleWorkers,
      });
      const v = verify(expected, outputDir);
      runs.push({
        contestant: c.name,
        round,
        jobSeconds: r.jobSeconds,
        submitSeconds: r.submitSeconds,
        cpuSeconds: r.cpuSeconds,
        identical: v.identical,
        detail: v.detail,
      });
      log(
        `round ${round} ${c.name}: job ${r.jobSeconds.toFixed(2)} s, ${v.identical ? 'exact' : `WRONG: ${v.detail}`}`,
      );
    }
  }
  const load = sampler.stop();
  const medians = Object.fromEntries(
    CONTESTANTS.map((c) => [c.name, median(runs.filter((r) => r.contestant === c.name).map((r) => r.jobSeconds))]),
  );
  const tm = medians.taskmanager!;
  const ratios = {
    'remote-1-worker': medians['remote-1-worker']! / tm,
    'remote-2-workers': medians['remote-2-workers']! / tm,
  };
  const allExact = runs.every((r) => r.identical);
  const met = allExact && Math.max(...Object.values(ratios)) <= TARGET_REMOTE_RATIO;
  const verdict = judge(met, load);
  const result = {
    command: `npx tsx bench/throughput/shuffle.ts --mb ${mb} --vocabulary ${vocabulary} --rounds ${rounds} --seed ${seed}`,
    corpus: { mb: corpus.bytes / MB, files: corpus.files.length, vocabulary, seed },
    runs,
    medianJobSeconds: medians,
    ratioToTaskManagerShuffle: ratios,
    target: { maxRatio: TARGET_REMOTE_RATIO, met: verdict },
    allOutputsExact: allExact,
    load,
  };
  mkdirSync(resolve(values.results, '..'), { recursive: true });
  writeFileSync(values.results, `${JSON.stringify(result, null, 2)}\n`);
  const f2 = (n: number): string => n.toFixed(2);
  process.stdout.write(
    [
      `wordcount, ${f2(corpus.bytes / MB)} MB, median job seconds over ${rounds} round(s):`,
      ...CONTESTANTS.map((c) => `  ${c.name.padEnd(18)} ${f2(medians[c.name]!)} s`),
      `remote / taskmanager: 1 worker ${f2(ratios['remote-1-worker'])}x, 2 workers ${f2(ratios['remote-2-workers'])}x (goal <= ${TARGET_REMOTE_RATIO}x): ${verdictText(verdict, load)}`,
      `outputs: ${allExact ? 'all exact' : 'SOME WRONG'}`,
      `wrote ${values.results}`,
      '',
    ].join('\n'),
  );
}

await main();
