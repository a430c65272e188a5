/**
 * What running a job's user code in a worker thread of its own costs the JobMaster (issue 25's
 * isolation, measured for issue 24), against the same code in the JobMaster's own isolate:
 *
 *   - start: module load + job build (and, for the worker, the thread and its bundled entry),
 *     the first start in a process apart from the later ones (the entry is bundled once);
 *   - memory: the JobMaster's RSS added per job whose worker is running;
 *   - split-request latency: a reader's request for its next split, answered by the enumerator.
 *
 *   npx tsx bench/user-code/run.ts [--runs 10] [--splits 2000] [--jobs 4]
 *
 * The job is examples/wordcount.ts, bundled as the JobMaster receives it, over `--splits` small
 * files (one split each). Prints the figures and writes bench/results/user-code.json, with the
 * load it saw (bench/load.ts). No target: this is the price list for the isolation.
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { bundleJobModule, buildOperators, loadJobModule } from '@rebound/api';
import { Configuration, silentLogger } from '@rebound/core';
import { InProcessUserCode, UserCodeWorkers, type JobUserCode } from '@rebound/jobmaster';
import { LoadSampler } from '../load.js';
import { ROOT } from '../recovery/cluster.js';
import { median } from '../recovery/figures.js';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '10' },
    splits: { type: 'string', default: '2000' },
    jobs: { type: 'string', default: '4' },
  },
});
const positive = (name: string, v: string | undefined): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) {
    process.stderr.write(`bench/user-code: --${name} ${v}: expected a positive integer\n`);
    process.exit(2);
  }
  return n;
};
const RUNS = positive('runs', values.runs);
const SPLITS = positive('splits', values.splits);
const JOBS = positive('jobs', values.jobs);

const round2 = (x: number): number => Math.round(x * 100) / 100;
const mb = (bytes: number): number => round2(bytes / 1024 / 1024);

interface Job {
  readonly dir: string;
  readonly bundle: string;
  readonly args: readonly string[];
}

async function prepare(dir: string): Promise<Job> {
  const input = join(dir, 'input');
  await mkdir(input);
  for (let i = 0; i < SPLITS; i++)
    await writeFile(join(input, `part-${String(i).padStart(5, '0')}.txt`), `a b c ${i}\n`);
  const bundle = join(dir, 'wordcount.mjs');
  await writeFile(bundle, (await bundleJobModule(join(ROOT, 'examples/wordcount.ts'))).code);
  return { dir, bundle, args: ['--input', input, '--output', join(dir, 'out')] };
}

/** A fresh copy of the bundle, so that each in-process load really loads (ESM caches by URL). */
let copies = 0;
async function freshCopy(job: Job): Promise<string> {
  const file = join(job.dir, `wordcount-${copies++}.mjs`);
  await writeFile(file, await readFile(job.bundle));
  return file;
}

async function startInProcess(job: Job): Promise<JobUserCode> {
  const def = await loadJobModule(await freshCopy(job));
  return new InProcessUserCode(await buildOperators(def, [...job.args], { cwd: job.dir }), silentLogger());
}

function startWorker(workers: UserCodeWorkers, job: Job): Promise<JobUserCode> {
  return workers.start({
    jobId: 'bench',
    modulePath: job.bundle,
    args: job.args,
    cwd: job.dir,
    jobConfig: Configuration.of({ 'jobmaster.job-module.load-timeout': '60 s' }),
    logger: silentLogger(),
  });
}

async function timed<T>(fn: () => Promise<T>): Promise<[number, T]> {
  const t0 = performance.now();
  const v = await fn();
  return [performance.now() - t0, v];
}

/** Per split request, µs: every split handed to one reader, one request at a time. */
async function splitLatencyUs(code: JobUserCode): Promise<number> {
  const sourceId = [...Array(64).keys()].map((i) => `op-${i}`).find((id) => code.operator(id)?.kind === 'source');
  if (!sourceId) throw new Error('wordcount has no source operator');
  const coordinator = code.createSourceCoordinator(sourceId, 'Source', 1);
  await coordinator.start();
  let handed = 0;
  const t0 = performance.now();
  for (;;) {
    const answer = await coordinator.requestSplit(0, 0);
    if ('split' in answer && answer.split) handed++;
    else break;
  }
  const us = ((performance.now() - t0) * 1000) / (handed + 1);
  await coordinator.close();
  if (handed !== SPLITS) throw new Error(`the enumerator handed out ${handed} splits of ${SPLITS}`);
  return us;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'rebound-bench-user-code-'));
  const sampler = new LoadSampler(1_000);
  const workers = new UserCodeWorkers();
  try {
    const job = await prepare(dir);
    // In-process first: its module graph (@rebound/api) is then warm for both.
    const inFirst = (await timed(() => startInProcess(job)))[0];
    const inStarts: number[] = [];
    const inSplits: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const [ms, code] = await timed(() => startInProcess(job));
      inStarts.push(ms);
      inSplits.push(await splitLatencyUs(code));
      await code.close();
    }
    const [workerFirst, first] = await timed(() => startWorker(workers, job));
    await first.close();
    const workerStarts: number[] = [];
    const workerSplits: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const [ms, code] = await timed(() => startWorker(workers, job));
      workerStarts.push(ms);
      workerSplits.push(await splitLatencyUs(code));
      await code.close();
    }
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    const running = await Promise.all(Array.from({ length: JOBS }, () => startWorker(workers, job)));
    const rssPerJob = (process.memoryUsage().rss - rssBefore) / JOBS;
    await Promise.all(running.map((c) => c.close()));
    const load = sampler.stop();
    const result = {
      benchmark: 'user-code',
      command: `npx tsx bench/user-code/run.ts --runs ${RUNS} --splits ${SPLITS} --jobs ${JOBS}`,
      date: new Date().toISOString(),
      node: process.version,
      load,
      inProcess: {
        firstStartMs: round2(inFirst),
        startMs: round2(median(inStarts)),
        splitRequestUs: round2(median(inSplits)),
      },
      worker: {
        firstStartMs: round2(workerFirst),
        startMs: round2(median(workerStarts)),
        splitRequestUs: round2(median(workerSplits)),
        rssPerRunningJobMb: mb(rssPerJob),
      },
    };
    process.stdout.write(
      [
        `User code in the JobMaster's isolate vs a worker per job (medians of ${RUNS}; ${SPLITS} splits; foreign CPU ${load.foreignCores ?? '?'} cores)`,
        `  start, first in the process   in-process ${result.inProcess.firstStartMs} ms   worker ${result.worker.firstStartMs} ms`,
        `  start, later                  in-process ${result.inProcess.startMs} ms   worker ${result.worker.startMs} ms`,
        `  split request                 in-process ${result.inProcess.splitRequestUs} µs   worker ${result.worker.splitRequestUs} µs`,
        `  RSS per running job (worker)  ${result.worker.rssPerRunningJobMb} MB (${JOBS} at once)`,
        '',
      ].join('\n'),
    );
    await writeFile(join(ROOT, 'bench/results/user-code.json'), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    sampler.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench/user-code: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
