import { errorMessage } from '@rebound/core';
import type { Logger, PartitionWithMetrics__Output } from '@rebound/core';
import type { ExecutionGraph } from '../execution-graph.js';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';

/** What releasing retained partitions of a job needs. */
export interface RetainedPartitionsScope {
  readonly jobId: string;
  readonly epoch: number;
  readonly graph: ExecutionGraph;
  readonly gateway: TaskExecutorGateway;
  readonly logger: Logger;
}

/**
 * Releases the given partitions of `tm` that no finished execution of the graph tracks there.
 * Never a blanket release of the job: tasks of this leader may already run on that TaskManager.
 */
export function releaseUntracked(scope: RetainedPartitionsScope, tm: RegisteredTaskManager, partitions: readonly PartitionWithMetrics__Output[]): void {
  const ids = partitions
    .map((p) => p.partition_id!)
    .filter((id) => {
      const ev = scope.graph.executionVertex(id.vertex_id, id.subtask);
      return !(ev && ev.state === 'FINISHED' && ev.attempt === id.attempt && ev.attemptEpoch === id.epoch && ev.location?.task_manager_id === tm.id);
    });
  if (ids.length === 0) return;
  scope.logger.info({ taskManagerId: tm.id, partitions: ids.length }, 'releasing retained partitions reported after reconciliation');
  scope.gateway
    .releasePartitions(tm, { epoch: scope.epoch, partitions: ids })
    .catch((err: unknown) => scope.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing partitions failed'));
}

/** A TaskManager registered too late for reconciliation: whatever it kept of this job is of no use now. */
export function releaseRetainedOfLateTaskManager(scope: RetainedPartitionsScope, tm: RegisteredTaskManager): void {
  scope.gateway
    .getAndRetainPartitionsWithMetrics(tm, { epoch: scope.epoch, job_id: scope.jobId })
    .then(
      (res) => releaseUntracked(scope, tm, res.partitions),
      (err: unknown) => scope.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'asking for retained partitions failed'),
    );
}
