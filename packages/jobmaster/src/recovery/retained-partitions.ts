import { errorMessage } from '@rebound/core';
import type { Logger, PartitionWithMetrics__Output } from '@rebound/core';
import type { ExecutionGraph } from '../execution-graph.js';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';

/** What releasing retained partitions of a job needs. */
export interface RetainedPartitionsScope {
  readonly job: {
    readonly jobId: string;
    /** The current graph: a restart from scratch replaces it. */
    readonly graph: ExecutionGraph;
  };
  readonly epoch: number;
  readonly gateway: TaskExecutorGateway;
  readonly logger: Logger;
}

/**
 * Releases the given partitions of `tm` that no finished execution of the graph tracks there.
 * Never a blanket release of the job: tasks of this leader may already run on that TaskManager.
 */
export function releaseUntracked(
  scope: RetainedPartitionsScope,
  tm: RegisteredTaskManager,
  partitions: readonly PartitionWithMetrics__Output[],
): void {
  const ids = partitions
    .map((p) => p.partition_id!)
    .filter((id) => {
      const ev = scope.job.graph.executionVertex(id.vertex_id, id.subtask);
      return !(
        ev &&
        ev.state === 'FINISHED' &&
        ev.attempt === id.attempt &&
        ev.attemptEpoch === id.epoch &&
        ev.location?.task_manager_id === tm.id
      );
    });
  if (ids.length === 0) return;
  scope.logger.info(
    { taskManagerId: tm.id, partitions: ids.length },
    'releasing retained partitions reported after reconciliation',
  );
  scope.gateway
    .releasePartitions(tm, { epoch: scope.epoch, partitions: ids })
    .catch((err: unknown) =>
      scope.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing partitions failed'),
    );
}

/**
 * A TaskManager registered too late for reconciliation: whatever it kept of this job is of no use
 * now. Tasks it kept running (keep-running-tasks) are canceled, never adopted: their executions
 * were reset and may already run again elsewhere.
 */
export function releaseRetainedOfLateTaskManager(scope: RetainedPartitionsScope, tm: RegisteredTaskManager): void {
  scope.gateway.getAndRetainPartitionsWithMetrics(tm, { epoch: scope.epoch, job_id: scope.job.jobId }).then(
    (res) => {
      releaseUntracked(scope, tm, res.partitions);
      for (const task of res.tasks) {
        if (task.state !== 'RUNNING' || task.deploy_epoch >= scope.epoch) continue;
        scope.logger.info(
          { taskManagerId: tm.id, execution: task.execution, deployEpoch: task.deploy_epoch },
          'canceling a task kept by a TaskManager that registered after reconciliation',
        );
        scope.gateway
          .cancelTask(tm, { epoch: scope.epoch, execution: task.execution, deploy_epoch: task.deploy_epoch })
          .catch((err: unknown) =>
            scope.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'canceling a kept task failed'),
          );
      }
    },
    (err: unknown) =>
      scope.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'asking for retained partitions failed'),
  );
}
