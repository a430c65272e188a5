import { PermissionDeniedError, attemptKey } from '@rebound/core';
import type { ExecutionAttemptId__Output, Logger } from '@rebound/core';
import type { ExecutionVertex } from './execution-graph.js';
import type { RegisteredTaskManager, TaskManagerRegistry } from './task-manager-registry.js';

/** The part of a job the check needs: which attempt is current and where it was deployed. */
export interface ExecutionOwners {
  currentAttempt(id: ExecutionAttemptId__Output | null, deployEpoch?: number): ExecutionVertex | undefined;
}

/** Who a TaskManager→JobMaster call about one execution claims to come from. */
export interface ExecutionCaller {
  readonly execution: ExecutionAttemptId__Output | null;
  readonly task_manager_id: string;
  readonly session_id: string;
  /** Epoch of the leader that deployed the attempt (0: the one called). */
  readonly deploy_epoch?: number;
}

/**
 * Admits a task update, split request or coordination request only from the TaskManager that
 * holds the execution: the caller must carry the session its TaskManager registered with, and
 * the execution's current attempt must have been deployed to that TaskManager. The cluster secret
 * alone is not enough: with it, a forged FINISHED for a sink subtask would make the leader commit
 * a half-written file, and a forged RequestSplit would take a split whose records then vanish.
 * Refusals are logged and change nothing. A call about an attempt that is no longer current
 * passes (from a registered TaskManager): the JobMaster ignores it as stale.
 */
export function authorizeExecutionCall(
  registry: TaskManagerRegistry,
  job: ExecutionOwners | undefined,
  caller: ExecutionCaller,
  method: string,
  logger: Logger,
): RegisteredTaskManager {
  const tm = registry.authenticate(caller.task_manager_id, caller.session_id, method);
  const ev = job?.currentAttempt(caller.execution, caller.deploy_epoch);
  const owner = ev?.location?.task_manager_id;
  if (ev && owner !== caller.task_manager_id) {
    const execution = attemptKey(caller.execution!);
    logger.warn(
      { event: 'session.reject', method, execution, taskManagerId: caller.task_manager_id, owner: owner ?? null },
      'refused a call about an execution another TaskManager holds',
    );
    throw new PermissionDeniedError(
      `${method} refused: execution ${execution} is ${owner ? `deployed to ${owner}` : 'not deployed'}, not to ${caller.task_manager_id}`,
    );
  }
  return tm;
}
