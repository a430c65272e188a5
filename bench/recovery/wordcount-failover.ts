/**
 * One wordcount job on a fresh local cluster, with a failure injected at a fraction of a
 * no-failure run's time: what the failover benchmarks (keep-running.ts, leader-and-tm.ts) share.
 * The output is compared with an independent oracle (bench/throughput/baseline.mjs: one plain
 * Node process, no Rebound code); the TaskManagers' task.deploy lines say what ran again.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecoveryReport__Output } from '@rebound/core';
import { readCounts } from '../throughput/verify.js';
import { ROOT, type KilledLeader } from './cluster.js';
import {
  firstStatus,
  jobFigures,
  killFigures,
  statusAt,
  waitForJobEnd,
  waitForNewLeader,
  withFreshCluster,
  type KillFigures,
} from './failover-run.js';
import { busiestTaskManager, redeployedAfter } from './reexecution.js';

const JOB_FILE = join(ROOT, 'examples/wordcount.ts');

/** Undefined when the cluster's part files hold exactly the oracle's counts, else what differs. */
export async function compareWithOracle(
  oracle: ReadonlyMap<string, string>,
  outputDir: string,
): Promise<string | undefined> {
  const parts = (await readdir(outputDir).catch(() => [] as string[]))
    .filter((n) => n.startsWith('part-'))
    .map((n) => join(outputDir, n));
  let actual: Map<string, string>;
  try {
    actual = readCounts(parts);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const problems: string[] = [];
  for (const [w, c] of oracle) if (actual.get(w) !== c) problems.push(`${w}: ${c} vs ${actual.get(w) ?? 'missing'}`);
  for (const w of actual.keys()) if (!oracle.has(w)) problems.push(`${w}: only in the cluster's output`);
  return problems.length === 0 ? undefined : `${problems.length} words differ, e.g. ${problems.slice(0, 3).join('; ')}`;
}

/** What to kill at the planned time: nothing, the leader, or the leader and one TaskManager. */
export type Fault = 'none' | 'leader' | 'leader-and-tm';

export interface FailoverJob {
  readonly name: string;
  readonly workdir: string;
  readonly inputDir: string;
  readonly oracle: ReadonlyMap<string, string>;
  /** Of every daemon and of the job. */
  readonly config: Readonly<Record<string, string>>;
  readonly taskmanagers: number;
  readonly shuffleWorkers?: number;
  /** Job arguments after --input/--output (e.g. --parallelism). */
  readonly jobArgs?: readonly string[];
  readonly fault: Fault;
  /** When to kill, as a fraction of `baselineMs` (required unless fault is 'none'). */
  readonly killAt?: number;
  readonly baselineMs?: number;
  readonly keep: boolean;
}

export interface FailoverResult {
  name: string;
  jobId: string;
  state: string;
  jobMs: number;
  tasks: number;
  deployments: number;
  outputExact: boolean;
  outputProblem?: string;
  /** Set when the job had ended before the planned kill (no failover measured). */
  killMissed?: string;
  kill?: KillFigures & {
    /** The TaskManager killed with the leader, and the subtasks that had finished on it. */
    taskManager?: { id: string; finishedOnIt: number };
    /** Subtasks deployed before the kill that were still running at it. */
    runningAtKill: number;
    /** Subtasks deployed before the kill and deployed again after it (TaskManager logs). */
    redeployed: string[];
    /** Of `redeployed`, those that had finished before the kill. */
    finishedRedeployed: string[];
    /** Deployments of the new epoch in all (first deployments of later stages included). */
    deploymentsAfterKill: number;
    recovery?: {
      runningTasksAdopted: number;
      finishedTasksReported: number;
      executionsRecovered: number;
      executionsReset: number;
      partitionsReused: number;
      partitionsReusedOnShuffleWorkers: number;
      restartedFromScratch: boolean;
      reconcileMs: number;
      electedToRunningMs: number;
    };
  };
}

export async function runFailoverJob(j: FailoverJob): Promise<FailoverResult> {
  const workdir = join(j.workdir, j.name);
  const up = {
    jobmasters: 2,
    taskmanagers: j.taskmanagers,
    slots: 1,
    ...(j.shuffleWorkers ? { shuffleWorkers: j.shuffleWorkers } : {}),
    config: j.config,
  };
  return withFreshCluster(
    workdir,
    up,
    j.keep,
    async (cluster) => {
      const output = join(workdir, 'output');
      const { jobId } = await cluster.submit(
        JOB_FILE,
        ['--input', j.inputDir, '--output', output, ...(j.jobArgs ?? [])],
        { config: j.config },
      );
      const submittedAt = Number((await firstStatus(cluster, jobId)).submitted_at_ms);
      let kill: KilledLeader | undefined;
      let killedTm: { id: string; finishedOnIt: number } | undefined;
      let newLeader: { epoch: number; electedAtMs: number } | undefined;
      let killMissed: string | undefined;
      const planned = j.fault !== 'none' && j.baselineMs !== undefined && j.killAt !== undefined;
      if (planned) {
        const before = await statusAt(cluster, jobId, submittedAt + Math.round(j.killAt! * j.baselineMs!));
        // The machine is shared: a job can run faster than its no-failure run. Recorded, not fatal.
        if (!before || before.state !== 'RUNNING')
          killMissed = `the job was ${before?.state ?? 'unreachable'} at the planned kill time`;
      }
      if (planned && killMissed === undefined) {
        const tm = j.fault === 'leader-and-tm' ? busiestTaskManager(await cluster.taskEvents()) : undefined;
        kill = await cluster.killLeader();
        if (tm) {
          await cluster.kill(tm.id, 'SIGKILL');
          killedTm = tm;
        }
        newLeader = await waitForNewLeader(cluster, kill);
      }
      const status = await waitForJobEnd(cluster, jobId, Date.now() + Math.max(300_000, 10 * (j.baselineMs ?? 0)));
      const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
      const outputProblem =
        status.state === 'FINISHED'
          ? await compareWithOracle(j.oracle, output)
          : `job ${status.state}: ${status.failure}`;
      const result: FailoverResult = {
        name: j.name,
        jobId,
        ...jobFigures(status, events, submittedAt),
        outputExact: outputProblem === undefined,
        ...(outputProblem ? { outputProblem } : {}),
        ...(killMissed ? { killMissed } : {}),
      };
      if (kill && newLeader) {
        const report: RecoveryReport__Output | undefined = status.recoveries.find((r) => Number(r.epoch) > kill.epoch);
        result.kill = {
          ...killFigures(kill, newLeader, submittedAt, Math.round(j.killAt! * j.baselineMs!)),
          ...(killedTm ? { taskManager: killedTm } : {}),
          ...redeployedAfter(events, kill),
          ...(report
            ? {
                recovery: {
                  runningTasksAdopted: report.running_tasks_adopted,
                  finishedTasksReported: report.finished_tasks_reported,
                  executionsRecovered: report.executions_recovered,
                  executionsReset: report.executions_reset,
                  partitionsReused: report.partitions_reused,
                  partitionsReusedOnShuffleWorkers: report.partitions_reused_on_shuffle_workers,
                  restartedFromScratch: report.restarted_from_scratch,
                  reconcileMs: Number(report.reconnect_wait_ms),
                  electedToRunningMs: Number(report.finished_at_ms) - Number(report.elected_at_ms),
                },
              }
            : {}),
        };
      }
      return result;
    },
    (result) => result.outputExact,
  );
}
