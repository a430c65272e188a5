/** Helpers the netns scenarios share: what the event log says was finished, and job shape. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dumpJobEvents } from '@rebound/event-store';
import type { TaskEvent } from '../harness.js';
import { finishedInLog, subtaskKey, type FinishedExecution, type SubtaskKey } from '../recovery-util.js';
import type { NetnsCluster } from './cluster.js';

/** Finished executions in the job's event log, only those of attempts of `maxEpoch` or older. */
export async function finishedNow(
  cluster: NetnsCluster,
  jobId: string,
  maxEpoch = Number.MAX_SAFE_INTEGER,
): Promise<Map<SubtaskKey, FinishedExecution>> {
  const finished = finishedInLog(await dumpJobEvents(cluster.storageDir, jobId));
  for (const [k, f] of finished) if (f.attemptEpoch > maxEpoch) finished.delete(k);
  return finished;
}

/** Waits until the histogram job's three vertices are known; returns its source and middle stage. */
export async function startedVertices(cluster: NetnsCluster, jobId: string) {
  const s = await cluster.waitFor(
    async () => {
      const st = await cluster.status(jobId);
      return st.vertices.length === 3 && st.vertices[0]!.parallelism > 0 ? st : undefined;
    },
    30_000,
    `job ${jobId} to start`,
  );
  return { source: s.vertices[0]!, middle: s.vertices[1]! };
}

/**
 * Deployments by leaders newer than `epoch` of subtasks that the log had finished by attempts of
 * `epoch` or older: the "no durable finished task rerun" rule says there are none.
 */
export function finishedRerun(
  events: readonly TaskEvent[],
  jobId: string,
  epoch: number,
  finishedBefore: ReadonlyMap<SubtaskKey, FinishedExecution>,
): string[] {
  return events
    .filter(
      (e) =>
        e.jobId === jobId &&
        e.event === 'task.deploy' &&
        (e.epoch ?? 0) > epoch &&
        finishedBefore.has(subtaskKey(e.vertexId, e.subtask)),
    )
    .map((e) => `${subtaskKey(e.vertexId, e.subtask)} redeployed by epoch ${e.epoch} on ${e.taskManagerId}`);
}

/** Names of the job's partition directories on every TaskManager's disk (`<tm>/<name>`), sorted. */
export async function partitionDirs(cluster: NetnsCluster, jobId: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of cluster.processes()) {
    if (p.role !== 'taskmanager' || !p.dataDir) continue;
    for (const name of await readdir(join(p.dataDir, 'partitions', jobId)).catch(() => [] as string[]))
      out.push(`${p.id}/${name}`);
  }
  return out.sort();
}
