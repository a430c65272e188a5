import { mkdir, mkdtemp, readFile, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { decodeMessage, encodeMessage } from '@rebound/core';
import type { JobGraph__Output } from '@rebound/core';
import { buildJob, defineJob, type OperatorCoordinatorProvider } from '@rebound/api';
import { until } from '../testing/fake-task-manager.js';
import { finish, type Deployment, type Leader } from '../testing/in-process-leaders.js';

const JOB_ID = 'abcdefabcdefabcdefabcdefabcdef01';

export async function graphOf(def: ReturnType<typeof defineJob>, config: Record<string, string> = {}) {
  const built = await buildJob(def, []);
  // As the JobGraphStore hands it to every leader: decoded from its binary form, one instance.
  const graph = decodeMessage<JobGraph__Output>(
    'JobGraph',
    encodeMessage('JobGraph', {
      ...built.graph,
      job_id: JOB_ID,
      module_digest: '0'.repeat(64),
      config,
      vertices: (built.graph.vertices ?? []).map((v) => ({ ...v, max_parallelism: 4 })),
    }),
  );
  return { graph, operators: built.operators };
}

/** This test's directory: the leaders' HA directory goes in it, and the job's output in `out`. */
export let dir: string;
export let out: string;

/**
 * A new directory for the next test. Each file's beforeEach calls it: with `isolate: false`
 * (vitest.config.ts) a worker evaluates this module once for every file that imports it, so a
 * hook registered here would run for the first file only.
 */
export async function createRecoveryDir(): Promise<void> {
  dir = await mkdtemp(join(tmpdir(), 'rebound-recovery-'));
  out = join(dir, 'out');
}

export async function writeSinkFile(d: Deployment, content: string): Promise<void> {
  await mkdir(dirname(d.tdd.sink_temp_file), { recursive: true });
  await writeFile(d.tdd.sink_temp_file, content);
}

/** Output lines of the committed sink files. */
export async function committedLines(): Promise<string[]> {
  const files = (await readdir(out)).filter((f) => f.startsWith('part-')).sort();
  const lines: string[] = [];
  for (const f of files) lines.push(...(await readFile(join(out, f), 'utf8')).split('\n').filter((l) => l !== ''));
  return lines;
}

/** Source (4 splits) -> map -> HASH -> sum (adaptive parallelism, max 4) [-> process] -> sink. */
export function seqSum(coordinator?: OperatorCoordinatorProvider) {
  return defineJob('seq-sum', (env) => {
    const summed = env
      .generateSequence(0, 99, { splitSize: 25 })
      .map((n) => [n % 3, n] as [number, number])
      .keyBy((t) => t[0])
      .sum(1);
    (coordinator ? summed.process(() => ({ processBatch: () => {} }), { coordinator }) : summed).writeAsText(out);
  });
}
export const SOURCE = 'v-op-1';
/** 800 bytes at 100 b per task: the consumer is decided to run with parallelism 4. */
export const SMALL_TASKS = { 'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': '100 b' };
export const RECONCILE = { 'execution.batch.job-recovery.previous-worker.recovery.timeout': '30 s' };

/** Leader 1 runs every source subtask to the end; returns their deployments by subtask. */
export async function runSources(l: Leader): Promise<Deployment[]> {
  await until(() => l.gateway.of(SOURCE).length === 4, 'the sources to be deployed');
  const sources = l.gateway.of(SOURCE).sort((a, b) => a.tdd.execution!.subtask - b.tdd.execution!.subtask);
  for (const d of sources) finish(l.job, d, [100, 0, 0, 100]);
  return sources;
}

export async function finishSink(l: Leader, d: Deployment): Promise<void> {
  await writeSinkFile(d, `part ${d.tdd.execution!.subtask} of epoch ${d.tdd.epoch}\n`);
  finish(l.job, d);
}
