/**
 * One wordcount job on a fresh local cluster, with a failure injected at a fraction of a
 * no-failure run's time: what the failover benchmarks (keep-running.ts, leader-and-tm.ts) share.
 * The output is compared with an independent oracle (bench/throughput/baseline.mjs: one plain
 * Node process, no Rebound code); the TaskManagers' task.deploy lines say what ran again.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { executionVertexKey, type JobStatus__Output, type RecoveryReport__Output } from '@rebound/core';
import { readCounts } from '../throughput/verify.js';
import { BenchCluster, ROOT, type KilledLeader, type TaskEvent } from './cluster.js';

const JOB_FILE = join(ROOT, 'examples/wordcount.ts');

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
export const fmt = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '-');

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
  kill?: {
    plannedAtJobMs: number;
    atJobMs: number;
    oldEpoch: number;
    newEpoch: number;
    electionMs: number;
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

function redeployedAfter(events: readonly TaskEvent[], kill: KilledLeader) {
  const before = new Set<string>();
  const finishedBefore = new Set<string>();
  const after = new Set<string>();
  let deploymentsAfterKill = 0;
  for (const e of events) {
    const key = executionVertexKey(e.vertexId, e.subtask);
    const old = e.time < kill.killedAtMs && (e.epoch ?? 0) <= kill.epoch;
    if (e.event === 'task.deploy' && old) before.add(key);
    if (e.event === 'task.finish' && old) finishedBefore.add(key);
    if (e.event === 'task.deploy' && (e.epoch ?? 0) > kill.epoch) {
      after.add(key);
      deploymentsAfterKill++;
    }
  }
  const redeployed = [...before].filter((k) => after.has(k)).sort();
  return {
    runningAtKill: [...before].filter((k) => !finishedBefore.has(k)).length,
    redeployed,
    finishedRedeployed: redeployed.filter((k) => finishedBefore.has(k)),
    deploymentsAfterKill,
  };
}

/** The TaskManager on which the most subtasks finished before now (ties: the lowest id). */
function busiestTaskManager(events: readonly TaskEvent[]): { id: string; finishedOnIt: number } | undefined {
  const perTm = new Map<string, number>();
  for (const e of events)
    if (e.event === 'task.finish') perTm.set(e.taskManagerId, (perTm.get(e.taskManagerId) ?? 0) + 1);
  const [best] = [...perTm].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return best ? { id: best[0], finishedOnIt: best[1] } : undefined;
}

export async function runFailoverJob(j: FailoverJob): Promise<FailoverResult> {
  const workdir = join(j.workdir, j.name);
  await rm(workdir, { recursive: true, force: true });
  await mkdir(workdir, { recursive: true });
  const cluster = await BenchCluster.start(workdir, {
    jobmasters: 2,
    taskmanagers: j.taskmanagers,
    slots: 1,
    ...(j.shuffleWorkers ? { shuffleWorkers: j.shuffleWorkers } : {}),
    config: j.config,
  });
  let ok = false;
  try {
    const output = join(workdir, 'output');
    const { jobId } = await cluster.submit(
      JOB_FILE,
      ['--input', j.inputDir, '--output', output, ...(j.jobArgs ?? [])],
      { config: j.config },
    );
    let status: JobStatus__Output | undefined;
    while (!(status = await cluster.jobStatus(jobId).catch(() => undefined))) await sleep(20);
    const submittedAt = Number(status.submitted_at_ms);
    let kill: KilledLeader | undefined;
    let killedTm: { id: string; finishedOnIt: number } | undefined;
    let newLeader: { epoch: number; electedAtMs: number } | undefined;
    let killMissed: string | undefined;
    const planned = j.fault !== 'none' && j.baselineMs !== undefined && j.killAt !== undefined;
    if (planned) {
      const wait = submittedAt + Math.round(j.killAt! * j.baselineMs!) - Date.now();
      if (wait > 0) await sleep(wait);
      const before = await cluster.jobStatus(jobId).catch(() => undefined);
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
      const deadline = kill.killedAtMs + 60_000;
      while (!newLeader) {
        const l = await cluster.leader();
        if (l && l.epoch > kill.epoch) newLeader = l;
        else if (Date.now() > deadline) throw new Error('no new leader within 60 s of the kill');
        else await sleep(10);
      }
    }
    const deadline = Date.now() + Math.max(300_000, 10 * (j.baselineMs ?? 0));
    for (;;) {
      status = await cluster.jobStatus(jobId).catch(() => undefined);
      if (status && ['FINISHED', 'FAILED', 'CANCELED'].includes(status.state) && Number(status.finished_at_ms) > 0)
        break;
      if (Date.now() > deadline) throw new Error(`job ${jobId} did not finish in time (${status?.state ?? '?'})`);
      await sleep(100);
    }
    const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
    const outputProblem =
      status.state === 'FINISHED'
        ? await compareWithOracle(j.oracle, output)
        : `job ${status.state}: ${status.failure}`;
    const result: FailoverResult = {
      name: j.name,
      jobId,
      state: status.state,
      jobMs: Number(status.finished_at_ms) - submittedAt,
      tasks: status.vertices.reduce((n, v) => n + v.parallelism, 0),
      deployments: events.filter((e) => e.event === 'task.deploy').length,
      outputExact: outputProblem === undefined,
      ...(outputProblem ? { outputProblem } : {}),
      ...(killMissed ? { killMissed } : {}),
    };
    if (kill && newLeader) {
      const report: RecoveryReport__Output | undefined = status.recoveries.find((r) => Number(r.epoch) > kill.epoch);
      result.kill = {
        plannedAtJobMs: Math.round(j.killAt! * j.baselineMs!),
        atJobMs: kill.killedAtMs - submittedAt,
        oldEpoch: kill.epoch,
        newEpoch: newLeader.epoch,
        electionMs: newLeader.electedAtMs - kill.killedAtMs,
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
    ok = result.outputExact;
    return result;
  } finally {
    await cluster.stop();
    if (ok && !j.keep) await rm(workdir, { recursive: true, force: true });
    else console.log(`  (keeping ${workdir})`);
  }
}
