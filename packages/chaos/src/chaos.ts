import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { dirname } from 'node:path';
import { replayCommand, type ChaosOptions } from './options.js';
import { planRun } from './plan.js';
import {
  TABLE_HEADER,
  batchOutcome,
  renderMarkdown,
  renderTable,
  summarize,
  summaryLines,
  tableRows,
  type BatchVerdict,
  type ChaosSummary,
} from './report.js';
import { runOne, type RunResult } from './runner.js';

export interface ChaosReport {
  readonly command: string;
  readonly startedAt: string;
  readonly wallTimeMs: number;
  readonly seed: number;
  readonly requestedRuns: number;
  readonly environment: string;
  readonly summary: ChaosSummary;
  readonly results: readonly RunResult[];
  /** Only 'passed' is a pass (see batchOutcome). */
  readonly verdict: BatchVerdict;
  /** 0 passed, 1 a run failed, 3 partial (time budget) or inconclusive (no fault injected). */
  readonly exitCode: number;
}

export interface ChaosIo {
  /** The table, the summary and the replay lines. */
  out(line: string): void;
  /** Progress of each run (suppressed with --quiet). */
  progress(line: string): void;
}

/**
 * `npm run chaos`: runs `opts.runs` runs (run i with seed `opts.seed + i`, each on a fresh local
 * cluster), prints a table and, for every failed run, its seed and the command that replays it.
 */
export async function runChaos(opts: ChaosOptions, command: string, io: ChaosIo): Promise<ChaosReport> {
  const started = Date.now();
  const results: RunResult[] = [];
  io.out(
    `chaos: seed ${opts.seed}, ${opts.runs} run(s)${opts.faults ? `, faults ${opts.faults.join(',')}` : ''}${opts.job ? `, job ${opts.job}` : ''}, HA ${opts.ha}, partitions ${opts.partitions ? 'on' : 'off'}`,
  );
  for (let i = 0; i < opts.runs; i++) {
    if (opts.timeBudgetMs !== undefined && Date.now() - started > opts.timeBudgetMs) {
      io.out(`chaos: time budget of ${Math.round(opts.timeBudgetMs / 1000)} s used up after ${i} run(s)`);
      break;
    }
    const seed = opts.seed + i;
    const plan = planRun(seed, {
      ...(opts.faults ? { pool: opts.faults } : {}),
      ...(opts.job ? { job: opts.job } : {}),
      ...(opts.faultsPerRun !== undefined ? { faultsPerRun: opts.faultsPerRun } : {}),
      ...(opts.crashPoint ? { crashPoint: opts.crashPoint } : {}),
      ...(opts.slowdown !== undefined ? { slowdown: opts.slowdown } : {}),
      ...(opts.keepRunningTasks !== undefined ? { keepRunningTasks: opts.keepRunningTasks } : {}),
      ha: opts.ha,
      partitions: opts.partitions,
      shuffleWorkers: opts.shuffleWorkers,
      ...(opts.shuffleReplicas !== undefined ? { shuffleReplicas: opts.shuffleReplicas } : {}),
    });
    const result = await runOne({
      run: i,
      plan,
      workRoot: opts.workRoot,
      deadlineMs: opts.deadlineMs,
      keepWorkdir: opts.keep,
      replayCommand: replayCommand(opts, seed),
      log: opts.quiet ? undefined : (l) => io.progress(l),
    });
    results.push(result);
    const [row] = renderTable(TABLE_HEADER, tableRows([result])).slice(1);
    io.progress(`${result.outcome === 'ok' ? 'ok  ' : 'FAIL'} ${row}`);
    if (result.outcome !== 'ok') {
      for (const p of result.problems) io.progress(`     ${p}`);
      io.progress(`     replay: ${result.replay}${result.workdir ? ` (work directory kept: ${result.workdir})` : ''}`);
    }
  }
  const summary = summarize(results);
  const outcome = batchOutcome(summary, opts.runs, opts.seed);
  const environment = `${cpus().length} CPU(s), load average ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')} at the end, Node ${process.version}`;
  const report: ChaosReport = {
    command,
    startedAt: new Date(started).toISOString(),
    wallTimeMs: Date.now() - started,
    seed: opts.seed,
    requestedRuns: opts.runs,
    environment,
    summary,
    results,
    verdict: outcome.verdict,
    exitCode: outcome.exitCode,
  };
  io.out('');
  for (const l of renderTable(TABLE_HEADER, tableRows(results))) io.out(l);
  io.out('');
  for (const l of summaryLines(summary)) io.out(l);
  const failed = results.filter((r) => r.outcome !== 'ok');
  for (const r of failed) {
    io.out(`FAILED run ${r.run}: seed ${r.seed}: ${r.problems[0] ?? r.outcome}`);
    io.out(`  replay: ${r.replay}`);
  }
  if (opts.json) {
    await mkdir(dirname(opts.json), { recursive: true });
    await writeFile(opts.json, JSON.stringify(report, null, 2) + '\n');
    io.out(`wrote ${opts.json}`);
  }
  if (opts.md) {
    await mkdir(dirname(opts.md), { recursive: true });
    await writeFile(opts.md, renderMarkdown(report));
    io.out(`wrote ${opts.md}`);
  }
  io.out(outcome.line);
  return report;
}
