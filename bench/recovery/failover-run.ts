/**
 * The steps of a job run across a planned leader kill on a fresh BenchCluster, shared by the
 * recovery benchmarks: status and leader are polled (never a fixed sleep for an outcome), and the
 * work directory is kept when a run fails.
 */
import { mkdir, rm } from 'node:fs/promises';
import type { JobStatus__Output } from '@rebound/core';
import type { LeaderInfo } from '@rebound/ha';
import type { ClusterUpOptions } from '@rebound/cli/testing';
import { BenchCluster, type KilledLeader, type TaskEvent } from './cluster.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Starts a cluster in an emptied `workdir`, runs `run` on it and stops it; the work directory is
 * removed only when `ok` holds for the result and `keep` is false.
 */
export async function withFreshCluster<T>(
  workdir: string,
  up: ClusterUpOptions,
  keep: boolean,
  run: (cluster: BenchCluster) => Promise<T>,
  ok: (result: T) => boolean,
): Promise<T> {
  await rm(workdir, { recursive: true, force: true });
  await mkdir(workdir, { recursive: true });
  const cluster = await BenchCluster.start(workdir, up);
  let fine = false;
  try {
    const result = await run(cluster);
    fine = ok(result);
    return result;
  } finally {
    await cluster.stop();
    if (fine && !keep) await rm(workdir, { recursive: true, force: true });
    else console.log(`  (keeping ${workdir})`);
  }
}

/** The job's first status (the leader may not answer right after the submission). */
export async function firstStatus(cluster: BenchCluster, jobId: string): Promise<JobStatus__Output> {
  let status: JobStatus__Output | undefined;
  while (!(status = await cluster.jobStatus(jobId).catch(() => undefined))) await sleep(20);
  return status;
}

/** Sleeps until `atMs` (epoch ms), then asks the job's status; undefined if the leader does not answer. */
export async function statusAt(
  cluster: BenchCluster,
  jobId: string,
  atMs: number,
): Promise<JobStatus__Output | undefined> {
  const wait = atMs - Date.now();
  if (wait > 0) await sleep(wait);
  return cluster.jobStatus(jobId).catch(() => undefined);
}

/** The leader of an epoch after the killed one's, within 60 s of the kill. */
export async function waitForNewLeader(cluster: BenchCluster, kill: KilledLeader): Promise<LeaderInfo> {
  for (;;) {
    const l = await cluster.leader();
    if (l && l.epoch > kill.epoch) return l;
    if (Date.now() - kill.killedAtMs > 60_000) throw new Error('no new leader within 60 s of the kill');
    await sleep(10);
  }
}

/** Polls until the job has ended; `onStatus` sees every status read on the way. */
export async function waitForJobEnd(
  cluster: BenchCluster,
  jobId: string,
  deadline: number,
  onStatus?: (status: JobStatus__Output) => Promise<void>,
): Promise<JobStatus__Output> {
  for (;;) {
    const status = await cluster.jobStatus(jobId).catch(() => undefined);
    if (status && onStatus) await onStatus(status);
    // finished_at_ms too: a JobMaster reports FINISHED before its sink commit is done and stamped.
    if (status && ['FINISHED', 'FAILED', 'CANCELED'].includes(status.state) && Number(status.finished_at_ms) > 0)
      return status;
    if (Date.now() > deadline)
      throw new Error(`job ${jobId} did not finish in time (last state ${status?.state ?? '?'})`);
    await sleep(100);
  }
}

/** When the leader was killed and how long the election took. */
export interface KillFigures {
  plannedAtJobMs: number;
  atJobMs: number;
  oldEpoch: number;
  newEpoch: number;
  /** electedAtMs of the new leader - kill time. */
  electionMs: number;
}

export function killFigures(
  kill: KilledLeader,
  newLeader: { epoch: number; electedAtMs: number },
  submittedAt: number,
  plannedAtJobMs: number,
): KillFigures {
  return {
    plannedAtJobMs,
    atJobMs: kill.killedAtMs - submittedAt,
    oldEpoch: kill.epoch,
    newEpoch: newLeader.epoch,
    electionMs: newLeader.electedAtMs - kill.killedAtMs,
  };
}

/** What every run records of the ended job. */
export function jobFigures(status: JobStatus__Output, events: readonly TaskEvent[], submittedAt: number) {
  return {
    state: status.state,
    jobMs: Number(status.finished_at_ms) - submittedAt,
    tasks: status.vertices.reduce((n, v) => n + v.parallelism, 0),
    deployments: events.filter((e) => e.event === 'task.deploy').length,
  };
}
