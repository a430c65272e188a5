import { randomBytes } from 'node:crypto';
import type { ExecutionAttemptId } from './generated/rebound/v1/ExecutionAttemptId.js';
import type { ResultPartitionId } from './generated/rebound/v1/ResultPartitionId.js';

/** 32 hex characters, like Flink's JobID. */
export function newJobId(): string {
  return randomBytes(16).toString('hex');
}

export function newInstanceId(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export function isJobId(s: string): boolean {
  return /^[0-9a-f]{32}$/.test(s);
}

type AttemptLike = Pick<ExecutionAttemptId, 'job_id' | 'vertex_id' | 'subtask' | 'attempt'>;

/** `<vertex>#<subtask>.<attempt>`: the form used in logs and as map keys (unique within a job). */
export function attemptKey(a: AttemptLike): string {
  return `${a.vertex_id}#${a.subtask ?? 0}.${a.attempt ?? 0}`;
}

/**
 * `<jobId>/<vertex>#<subtask>.<attempt>@<epoch>`: unique within a cluster, across leaders too
 * (the epoch is that of the leader that deployed the producing attempt).
 */
export function partitionKey(
  p: Pick<ResultPartitionId, 'job_id' | 'vertex_id' | 'subtask' | 'attempt' | 'epoch'>,
): string {
  return `${p.job_id}/${attemptKey(p)}@${p.epoch ?? 0}`;
}

export function executionVertexKey(vertexId: string, subtask: number): string {
  return `${vertexId}#${subtask}`;
}
