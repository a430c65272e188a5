/**
 * A job's event log opened outside a JobMaster, as the leader of one epoch that stays the leader
 * (the recovery benchmarks write, copy and replay logs without an HA backend).
 */
import { executionVertexKey, type JobGraph__Output } from '@rebound/core';
import { FileSystemJobEventStore, JobEventManager, type FileSystemJobEventStoreOptions } from '@rebound/event-store';
import { ReplayedJobState } from '@rebound/jobmaster';

export function eventStoreOf(
  haDir: string,
  jobId: string,
  epoch: number,
  options: Pick<FileSystemJobEventStoreOptions, 'config' | 'clock'> = {},
): FileSystemJobEventStore {
  return new FileSystemJobEventStore({ haDir, jobId, epoch, currentLeaderEpoch: () => epoch, ...options });
}

/** The finished executions (vertex#subtask → attempt) in a copy of the event log. */
export async function durableFinished(haCopy: string, graph: JobGraph__Output): Promise<Map<string, number>> {
  const manager = new JobEventManager(eventStoreOf(haCopy, graph.job_id, 1_000_000));
  await manager.start();
  const state = new ReplayedJobState(graph);
  const result = await manager.replay((r) => state.apply(r));
  await manager.stop(false);
  if (!result.ok) throw new Error(`cannot replay the copied event log: ${JSON.stringify(result.failure)}`);
  return new Map(state.finished().map((e) => [executionVertexKey(e.vertex_id, e.subtask), e.attempt]));
}
