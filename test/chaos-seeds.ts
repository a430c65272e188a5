import { expect } from 'vitest';
import {
  describeCrashPoint,
  parseChaosArgs,
  planRun,
  replayCommand,
  runOne,
  type FaultKind,
  type RunPlanOptions,
  type RunResult,
} from '@rebound/chaos';

/**
 * One fixed chaos seed as CI runs it (test/chaos/, test/etcd/chaos-etcd.test.ts). A fault whose
 * trigger came after the job's end is a missed experiment, not a verdict on Rebound: the same
 * seed runs again with the job slowed down (same input, same faults), up to twice. A wrong,
 * stuck or rerunning run fails at once.
 */
export const SLOWDOWNS = [1, 3, 9] as const;

/** The `npm run chaos` flags that plan the same run, for the replay line of a failure. */
function flagsOf(seed: number, o: RunPlanOptions, slowdown: number): string[] {
  const cli = ['--seed', String(seed)];
  if (o.pool) cli.push('--faults', o.pool.join(','));
  if (o.job) cli.push('--job', o.job);
  if (o.faultsPerRun) cli.push('--faults-per-run', String(o.faultsPerRun));
  if (o.crashPoint) cli.push('--crash-point', describeCrashPoint(o.crashPoint));
  if (o.ha && o.ha !== 'file') cli.push('--ha', o.ha);
  if (o.partitions) cli.push('--partitions');
  if (o.keepRunningTasks !== undefined) cli.push('--keep-running-tasks', o.keepRunningTasks ? 'on' : 'off');
  if (o.shuffleWorkers) cli.push('--shuffle-workers', String(o.shuffleWorkers));
  if (o.shuffleReplicas !== undefined) cli.push('--shuffle-replicas', String(o.shuffleReplicas));
  if (slowdown !== 1) cli.push('--slowdown', String(slowdown));
  return cli;
}

/** Runs the seed to a verdict; returns the kinds it injected. `onFailed` keeps the work root. */
export async function runCiSeed(
  seed: number,
  options: RunPlanOptions,
  workRoot: string,
  onFailed: () => void,
): Promise<FaultKind[]> {
  for (const slowdown of SLOWDOWNS) {
    const plan = planRun(seed, { ...options, slowdown });
    const replay = replayCommand(parseChaosArgs(flagsOf(seed, options, slowdown)), seed);
    const result: RunResult = await runOne({ run: 0, plan, workRoot, deadlineMs: 200_000, replayCommand: replay });
    if (result.outcome !== 'ok') onFailed();
    const context = `replay: ${replay}${result.workdir ? `; work directory ${result.workdir}` : ''}; notes: ${result.faults.map((f) => `${f.description}: ${f.notes.join('; ')}`).join(' | ')}`;
    expect(result.problems, context).toEqual([]);
    expect(result.outcome).toBe('ok');
    expect(result.tasks?.violations).toBe(0);
    const missed = result.faults.filter((f) => !f.injected);
    if (missed.length > 0 && slowdown !== SLOWDOWNS.at(-1)) continue;
    for (const f of result.faults)
      expect(f.injected, `${f.description} was not injected (${f.notes.join('; ')}); ${context}`).toBe(true);
    return result.faults.map((f) => f.kind);
  }
  return [];
}
