import { attemptKey } from '@rebound/core';
import type { TaskDeploymentDescriptor__Output } from '@rebound/core';
import type { AttemptReceipts } from './held-tasks.js';

/** A task attempt deployed to this TaskManager, from deployment until its slot is freed. */
export interface RunningTask {
  readonly tdd: TaskDeploymentDescriptor__Output;
  readonly controller: AbortController;
  /** Epoch of the leader that deployed it: in its partition id, sink file and task key. */
  readonly epoch: number;
  /**
   * Epoch of the leader the task answers to: the deploying one, or the leader that adopted it
   * after a failover (keep-running-tasks). Its reports and requests carry this epoch.
   */
  leaderEpoch: number;
  /** The job keeps running tasks through the loss of their leader. */
  readonly keepRunning: boolean;
  /** While there is no leader for it: since when (ms), for the log. */
  leaderlessSinceMs: number | undefined;
  /** The splits and coordinator responses this attempt received: reported to an adopting leader. */
  readonly received: AttemptReceipts;
  /** Set when the JobMaster asked for the cancel (reported as CANCELED, not FAILED). */
  canceledByJobMaster: boolean;
}

/**
 * A task is one attempt deployed by one leader. A leader that restarts a job from scratch numbers
 * attempts from 0 again, so without the epoch its deployment would be taken for a (still aborting)
 * task of the deposed leader and silently dropped.
 */
export function attemptKeyOf(
  e: { job_id: string; vertex_id: string; subtask: number; attempt: number },
  epoch: number,
): string {
  return `${epoch}/${e.job_id}/${attemptKey(e)}`;
}

/** The log fields that name a task attempt. */
export function taskLogOf(tdd: TaskDeploymentDescriptor__Output): Record<string, unknown> {
  const e = tdd.execution!;
  return {
    jobId: e.job_id,
    vertexId: e.vertex_id,
    vertexName: tdd.vertex_name,
    subtask: e.subtask,
    attempt: e.attempt,
    epoch: tdd.epoch,
  };
}
