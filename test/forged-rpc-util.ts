import { fromServiceError, loadProto, type ReboundError } from '@rebound/core';
import type { LocalCluster, TaskEvent } from './harness.js';

// Helpers of test/forged-rpc.test.ts: forged calls and what they must have left behind.

export async function rejection(p: Promise<unknown>): Promise<ReboundError> {
  try {
    await p;
  } catch (e) {
    return e as ReboundError;
  }
  throw new Error('the forged call was accepted');
}

/** A session secret no TaskManager has. */
export const FORGED_SESSION = 'forged-session-0000000000000000';

/** Reads a partition like a consumer without the job's read capability would; resolves if it was served. */
export async function forgedRead(
  address: string,
  partitionId: Record<string, unknown>,
  security: ReturnType<LocalCluster['security']>,
): Promise<void> {
  const proto = loadProto();
  const client = new proto.PartitionService(address, security.channelCredentials(), security.channelOptions());
  try {
    const call = client.ReadSubpartitions(
      { partition_id: partitionId, subpartition_start: 0, subpartition_end: 0 },
      { deadline: Date.now() + 10_000 },
    );
    try {
      for await (const _chunk of call as AsyncIterable<unknown>) {
        // Served: the assertion on the caller's side fails.
      }
    } catch (err) {
      throw fromServiceError(err);
    }
  } finally {
    client.close();
  }
}

/** Task attempts deployed and not yet ended, from the TaskManagers' task lifecycle log lines. */
export function openAttempts(events: readonly TaskEvent[], jobId: string): TaskEvent[] {
  const open = new Map<string, TaskEvent>();
  for (const e of events) {
    if (e.jobId !== jobId) continue;
    const key = `${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}/${e.epoch ?? 0}`;
    if (e.event === 'task.deploy') open.set(key, e);
    else open.delete(key);
  }
  return [...open.values()];
}
