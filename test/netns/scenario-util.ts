/** Helpers the netns scenarios share: what the event log says was finished, and job shape. */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dumpJobEvents } from '@rebound/event-store';
import type { TaskEvent } from '../harness.js';
import {
  finishedInLog,
  histogramStarted,
  subtaskKey,
  type FinishedExecution,
  type SubtaskKey,
} from '../recovery-util.js';
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
  const { source, middle } = await histogramStarted(cluster, jobId);
  return { source, middle };
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

/**
 * Waits for a subtask of `vertexId` that is running now (deployed, not ended), on a TaskManager
 * `where` accepts; returns its deployment.
 */
export async function runningSubtask(
  cluster: NetnsCluster,
  jobId: string,
  vertexId: string,
  what: string,
  where: (taskManagerId: string) => boolean = () => true,
): Promise<TaskEvent> {
  return cluster.waitFor(
    async () => {
      const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId && e.vertexId === vertexId);
      const done = new Set(
        events.filter((e) => e.event !== 'task.deploy').map((e) => `${e.taskManagerId}/${e.subtask}/${e.attempt}`),
      );
      return events.find(
        (e) =>
          e.event === 'task.deploy' &&
          !done.has(`${e.taskManagerId}/${e.subtask}/${e.attempt}`) &&
          where(e.taskManagerId),
      );
    },
    30_000,
    what,
  );
}
