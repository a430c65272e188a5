import type {
  PartitionWithMetrics__Output,
  ResultPartitionId,
  ShuffleWorkerLocation__Output,
  TaskManagerLocation__Output,
} from '@rebound/core';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import {
  ShuffleMasterSnapshot,
  type JobShuffleContext,
  type PartitionHolder,
  type PartitionWithMetrics,
  type ShuffleMaster,
  type ShuffleMasterSnapshotContext,
} from './shuffle-master.js';

/** What the TaskManager shuffle needs of its leadership. */
export interface TaskManagerShuffleMasterOptions {
  readonly epoch: number;
  readonly gateway: TaskExecutorGateway;
}

/** The holder a TaskManager is, for the partitions it produced. */
export function taskManagerHolder(tm: RegisteredTaskManager): PartitionHolder {
  return { kind: 'taskmanager', id: tm.id, address: tm.address };
}

/**
 * One job's recovery in progress: each TaskManager's newest report (one that registers again
 * reports again, and its second report replaces the first), and the TaskManagers that sent them.
 */
interface Collecting {
  readonly reports: Map<string, PartitionWithMetrics[]>;
  readonly taskManagers: Map<string, RegisteredTaskManager>;
}

/**
 * The default shuffle (Flink's NettyShuffleMaster): each partition stays on the TaskManager that
 * produced it, and consumers read it there. Stateless, so its snapshots are empty and batch
 * snapshots are trivially supported: after a failover the TaskManagers themselves report what
 * they kept, and that is all a new leader needs to know.
 */
export class TaskManagerShuffleMaster implements ShuffleMaster {
  readonly type: string = 'taskmanager';
  readonly partitionsOutliveTaskManagers = false;
  private readonly jobs = new Map<string, JobShuffleContext>();
  private readonly collecting = new Map<string, Collecting>();

  constructor(private readonly opts: TaskManagerShuffleMasterOptions) {}

  registerJob(context: JobShuffleContext): void {
    this.jobs.set(context.jobId, context);
  }

  unregisterJob(jobId: string): void {
    this.jobs.delete(jobId);
    this.collecting.delete(jobId);
  }

  supportsBatchSnapshot(): boolean {
    return true;
  }

  /** The JobRunner's DisconnectJob releases a finished job's partitions on every TaskManager. */
  releaseJob(): void {}

  registerPartitionWithProducer(): ShuffleWorkerLocation__Output[] {
    return [];
  }

  holdersOf(_jobId: string, _partition: ResultPartitionId, producer: TaskManagerLocation__Output): PartitionHolder[] {
    return [{ kind: 'taskmanager', id: producer.task_manager_id, address: producer.address }];
  }

  snapshotState(_context: ShuffleMasterSnapshotContext): ShuffleMasterSnapshot {
    return ShuffleMasterSnapshot.empty();
  }

  restoreState(_jobId: string, _snapshots: readonly ShuffleMasterSnapshot[]): void {}

  notifyPartitionRecoveryStarted(jobId: string): void {
    this.collecting.set(jobId, { reports: new Map(), taskManagers: new Map() });
  }

  taskManagerReported(
    jobId: string,
    tm: RegisteredTaskManager,
    partitions: readonly PartitionWithMetrics__Output[],
  ): void {
    const c = this.collecting.get(jobId);
    if (!c) return;
    const holder = taskManagerHolder(tm);
    const reports = partitions.filter((p) => p.partition_id).map((partition) => ({ holder, partition }));
    c.taskManagers.set(tm.id, tm);
    c.reports.set(tm.id, reports);
    this.jobs.get(jobId)?.partitionsReported(reports, holder);
  }

  getAllPartitionWithMetrics(jobId: string): Promise<PartitionWithMetrics[]> {
    return Promise.resolve([...(this.collecting.get(jobId)?.reports.values() ?? [])].flat());
  }

  async releasePartitions(
    jobId: string,
    holder: PartitionHolder,
    partitions: readonly ResultPartitionId[],
  ): Promise<void> {
    const tm = this.collecting.get(jobId)?.taskManagers.get(holder.id);
    if (!tm || partitions.length === 0) return;
    await this.opts.gateway.releasePartitions(tm, { epoch: this.opts.epoch, partitions: [...partitions] });
  }

  /** It places nothing on shuffle workers. */
  excludeWorkers(_workerIds: readonly string[], _reason: string): void {}
}
