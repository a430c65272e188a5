/**
 * Helpers of the FLIP-383 recovery integration tests (test/recovery*.test.ts): what the job event
 * log says was finished when a leader died, which subtasks the TaskManagers were asked to run
 * again, where partitions live on disk, and the expected output of test/fixtures/histogram.ts.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { dumpJobEvents, type JobEventsDump } from '@rebound/event-store';
import type { JobStatusJson } from '@rebound/cli';
import type { LocalCluster, TaskEvent } from './harness.js';

export const HISTOGRAM_JOB = 'test/fixtures/histogram.ts';
/** Parallelism of the histogram's middle stage (the fixture's default). */
export const MIDDLE_PARALLELISM = 2;
export const WORDCOUNT_JOB = 'examples/wordcount.ts';

/** `vertexId#subtask`. */
export type SubtaskKey = string;

export function subtaskKey(vertexId: string, subtask: number): SubtaskKey {
  return `${vertexId}#${subtask}`;
}

/** A finished execution as the event log records it. */
export interface FinishedExecution {
  readonly vertexId: string;
  readonly subtask: number;
  readonly attempt: number;
  /** Epoch of the leader that deployed the attempt. */
  readonly attemptEpoch: number;
  readonly taskManagerId: string;
}

export async function readEventLog(cluster: LocalCluster, jobId: string): Promise<JobEventsDump> {
  return dumpJobEvents(cluster.haDir, jobId);
}

/**
 * The executions a new leader recovers as finished from `dump`: the last finished event of each
 * subtask, unless a reset came after it (the replay rule of FLIP-383).
 */
export function finishedInLog(dump: JobEventsDump): Map<SubtaskKey, FinishedExecution> {
  const finished = new Map<SubtaskKey, FinishedExecution>();
  for (const r of dump.events) {
    if (r.type === 'ExecutionVertexFinished') {
      const e = r.event;
      finished.set(subtaskKey(e.vertex_id, e.subtask), {
        vertexId: e.vertex_id,
        subtask: e.subtask,
        attempt: e.attempt,
        attemptEpoch: e.attempt_epoch,
        taskManagerId: e.location?.task_manager_id ?? '',
      });
    } else if (r.type === 'ExecutionVertexReset') {
      for (const v of r.event.vertices) finished.delete(subtaskKey(v.vertex_id, v.subtask));
    }
  }
  return finished;
}

/** Finished executions of one vertex, by subtask. */
export function finishedOf(
  finished: ReadonlyMap<SubtaskKey, FinishedExecution>,
  vertexId: string,
): FinishedExecution[] {
  return [...finished.values()].filter((f) => f.vertexId === vertexId).sort((a, b) => a.subtask - b.subtask);
}

/** Polls the event log on disk until `predicate` holds for what it says is finished. */
export async function waitForLog(
  cluster: LocalCluster,
  jobId: string,
  predicate: (finished: Map<SubtaskKey, FinishedExecution>, dump: JobEventsDump) => boolean,
  timeoutMs: number,
  what: string,
): Promise<Map<SubtaskKey, FinishedExecution>> {
  return cluster.waitFor(
    async () => {
      const dump = await readEventLog(cluster, jobId);
      const finished = finishedInLog(dump);
      return predicate(finished, dump) ? finished : undefined;
    },
    timeoutMs,
    `the event log of ${jobId} to show ${what}`,
  );
}

/** SIGKILLs the leading JobMaster (in-process: no CLI start-up delay). */
export async function killLeader(cluster: LocalCluster): Promise<{ id: string; epoch: number }> {
  const leader = await cluster.leader();
  if (!leader) throw new Error('no leader to kill');
  await cluster.kill(leader.jobmasterId, 'SIGKILL');
  return { id: leader.jobmasterId, epoch: leader.epoch };
}

/**
 * Leaves the cluster without a leader at once: freezes (SIGSTOP) every standby JobMaster, then
 * SIGKILLs the leader. `resumeStandbys` (SIGCONT) brings a leader back within a lease timeout,
 * much faster than starting a JobMaster process.
 */
export async function killAllJobMasters(
  cluster: LocalCluster,
): Promise<{ killed: { id: string; epoch: number }; frozen: string[] }> {
  const leader = await cluster.leader();
  if (!leader) throw new Error('no leader to kill');
  const frozen: string[] = [];
  for (const p of await cluster.processes()) {
    if (p.role !== 'jobmaster' || p.id === leader.jobmasterId || !(await cluster.isAlive(p.id))) continue;
    await cluster.kill(p.id, 'SIGSTOP');
    frozen.push(p.id);
  }
  await cluster.kill(leader.jobmasterId, 'SIGKILL');
  return { killed: { id: leader.jobmasterId, epoch: leader.epoch }, frozen };
}

export async function resumeStandbys(cluster: LocalCluster, frozen: readonly string[]): Promise<void> {
  for (const id of frozen) await cluster.kill(id, 'SIGCONT');
}

/** Waits until a leader of an epoch above `epoch` is elected. */
export async function waitForNewLeader(cluster: LocalCluster, epoch: number): Promise<{ id: string; epoch: number }> {
  return cluster.waitFor(
    async () => {
      const l = await cluster.leader();
      return l && l.epoch > epoch ? { id: l.jobmasterId, epoch: l.epoch } : undefined;
    },
    30_000,
    `a leader of an epoch above ${epoch}`,
  );
}

/** Deployments of `jobId` by leaders of an epoch above `afterEpoch`, in log order. */
export function deploymentsAfter(events: readonly TaskEvent[], jobId: string, afterEpoch: number): TaskEvent[] {
  return events.filter((e) => e.jobId === jobId && e.event === 'task.deploy' && (e.epoch ?? 0) > afterEpoch);
}

/** The sorted `vertexId#subtask` keys of deployments (duplicates kept: a subtask deployed twice shows twice). */
export function deployedKeys(deploys: readonly TaskEvent[]): SubtaskKey[] {
  return deploys.map((e) => subtaskKey(e.vertexId, e.subtask)).sort();
}

/**
 * The sorted distinct `vertexId#subtask` keys of deployments. For checks across a takeover: on a
 * loaded machine a new leader can itself lose its lease and a later one deploy the same unfinished
 * subtasks again, which the test cannot prevent; what it can check is which subtasks ran again.
 */
export function redeployedSubtasks(deploys: readonly TaskEvent[]): SubtaskKey[] {
  return [...new Set(deployedKeys(deploys))].sort();
}

/** The first recovery report of a leader newer than `epoch` (the one that replayed the log as the killed leader left it). */
export function firstRecoveryAfter<R extends { epoch: number }>(
  recoveries: readonly R[],
  epoch: number,
): R | undefined {
  return recoveries.find((r) => r.epoch > epoch);
}

/** Every subtask of the given vertices, `vertexId#subtask`, sorted. */
export function allSubtasks(vertices: readonly { id: string; parallelism: number }[]): SubtaskKey[] {
  return vertices.flatMap((v) => Array.from({ length: v.parallelism }, (_, i) => subtaskKey(v.id, i))).sort();
}

/** The `count<TAB>keys` lines test/fixtures/histogram.ts must produce, computed directly. */
export function expectedHistogram(records: number, keys: number): Map<string, number> {
  const perKey = new Array<number>(keys).fill(0);
  for (let n = 0; n < records; n++) perKey[n % keys]!++;
  const histogram = new Map<string, number>();
  for (const c of perKey) if (c > 0) histogram.set(String(c), (histogram.get(String(c)) ?? 0) + 1);
  return histogram;
}

export function histogramArgs(opts: {
  records: number;
  keys: number;
  output: string;
  splits?: number;
  parallelism?: number;
  source?: 'sequence' | 'legacy';
  batchSize?: number;
  batchDelayMs?: number;
  slowSplitDelayMs?: number;
  reduceDelayMs?: number;
  middleParallelism?: number;
  sinkDelayMs?: number;
}): string[] {
  const args = ['--records', String(opts.records), '--keys', String(opts.keys), '--output', opts.output];
  const add = (name: string, v: number | string | undefined): void => {
    if (v !== undefined) args.push(`--${name}`, String(v));
  };
  add('splits', opts.splits);
  add('parallelism', opts.parallelism);
  add('source', opts.source);
  add('batch-size', opts.batchSize);
  add('batch-delay-ms', opts.batchDelayMs);
  add('slow-split-delay-ms', opts.slowSplitDelayMs);
  add('reduce-delay-ms', opts.reduceDelayMs);
  add('middle-parallelism', opts.middleParallelism);
  add('sink-delay-ms', opts.sinkDelayMs);
  return args;
}

/** A finished partition's directory on a TaskManager's disk. */
export interface PartitionOnDisk {
  readonly taskManagerId: string;
  /** `<vertexId>-<subtask>-<attempt>-e<epoch>` */
  readonly name: string;
  readonly dir: string;
}

/** The partition directories of `jobId` on every TaskManager (see packages/partition/src/README.md). */
export async function partitionsOnDisk(cluster: LocalCluster, jobId: string): Promise<PartitionOnDisk[]> {
  const out: PartitionOnDisk[] = [];
  for (const p of await cluster.processes()) {
    if (p.role !== 'taskmanager' || !p.dataDir) continue;
    const jobDir = join(p.dataDir, 'partitions', jobId);
    const names = await readdir(jobDir).catch(() => [] as string[]);
    for (const name of names.sort()) out.push({ taskManagerId: p.id, name, dir: join(jobDir, name) });
  }
  return out;
}

/** The directory name of the partition a finished execution wrote. */
export function partitionName(f: Pick<FinishedExecution, 'vertexId' | 'subtask' | 'attempt' | 'attemptEpoch'>): string {
  return `${f.vertexId}-${f.subtask}-${f.attempt}-e${f.attemptEpoch}`;
}

/** Deletes a finished partition's data file, as a lost disk would (the consumer gets PartitionNotFound). */
export async function deletePartitionData(
  cluster: LocalCluster,
  jobId: string,
  name: string,
): Promise<PartitionOnDisk> {
  const p = (await partitionsOnDisk(cluster, jobId)).find((x) => x.name === name);
  if (!p) throw new Error(`no partition ${name} of job ${jobId} on any TaskManager`);
  const data = join(p.dir, 'data');
  await stat(data); // it must be there before we delete it
  await rm(data);
  return p;
}

/** A cluster the histogram scenarios ask for a job's status (a local or a netns cluster). */
export interface StatusSource {
  status(jobId: string): Promise<JobStatusJson>;
  waitFor<T>(
    predicate: () => T | Promise<T>,
    timeoutMs: number,
    what: string,
  ): Promise<Exclude<T, undefined | false | null>>;
}

/**
 * Waits until the histogram job's three vertices are known, its source's parallelism decided;
 * returns the status, its source and its middle stage.
 */
export async function histogramStarted(
  cluster: StatusSource,
  jobId: string,
): Promise<{
  status: JobStatusJson;
  source: JobStatusJson['vertices'][number];
  middle: JobStatusJson['vertices'][number];
}> {
  const status = await cluster.waitFor(
    async () => {
      const st = await cluster.status(jobId);
      return st.vertices.length === 3 && st.vertices[0]!.parallelism > 0 ? st : undefined;
    },
    30_000,
    `job ${jobId} to start`,
  );
  return { status, source: status.vertices[0]!, middle: status.vertices[1]! };
}
