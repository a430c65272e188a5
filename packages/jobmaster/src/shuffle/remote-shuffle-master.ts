import { UnavailableError, errorMessage, partitionKey } from '@rebound/core';
import type {
  Logger,
  PartitionWithMetrics__Output,
  ResultPartitionId,
  ResultPartitionId__Output,
  ShuffleWorkerLocation__Output,
  TaskManagerLocation__Output,
} from '@rebound/core';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import { JobPlacements } from './remote-shuffle-state.js';
import {
  ShuffleMasterSnapshot,
  type JobShuffleContext,
  type PartitionHolder,
  type PartitionWithMetrics,
  type ShuffleMaster,
  type ShuffleMasterSnapshotContext,
} from './shuffle-master.js';
import type { RegisteredShuffleWorker, ShuffleWorkerRegistry } from './shuffle-worker-registry.js';

export interface RemoteShuffleMasterOptions {
  readonly epoch: number;
  readonly workers: ShuffleWorkerRegistry;
  readonly logger: Logger;
}

function workerHolder(w: { worker_id: string; address: string }): PartitionHolder {
  return { kind: 'shuffle-worker', id: w.worker_id, address: w.address };
}

/**
 * The remote shuffle's ShuffleMaster (Celeborn's LifecycleManager in Flink's terms): chooses the
 * shuffle workers of every partition at deployment, remembers them, and records them in the
 * event log, so that a new leader knows where finished work is kept even when the TaskManager
 * that produced it died with the old leader. Partitions outlive their TaskManagers.
 *
 * Its snapshots are incremental (the placements since the previous one) and full when a vertex
 * finishes. A new leader restores them, then asks every worker that registers what it holds of
 * each job it is recovering.
 */
export class RemoteShuffleMaster implements ShuffleMaster {
  readonly type: string = 'remote';
  readonly partitionsOutliveTaskManagers = true;
  private readonly jobs = new Map<string, JobShuffleContext>();
  private readonly placements = new Map<string, JobPlacements>();
  /** Jobs being recovered: the newest report of each worker. */
  private readonly collecting = new Map<string, Map<string, PartitionWithMetrics[]>>();
  /** Workers this leader saw die: a partition all of whose workers are here is lost. */
  private readonly lost = new Set<string>();
  /** Partitions placed on each worker by this leader (spreads the load). */
  private readonly placed = new Map<string, number>();

  constructor(private readonly opts: RemoteShuffleMasterOptions) {}

  registerJob(context: JobShuffleContext): void {
    this.jobs.set(context.jobId, context);
    if (!this.placements.has(context.jobId)) this.placements.set(context.jobId, new JobPlacements());
  }

  unregisterJob(jobId: string): void {
    this.jobs.delete(jobId);
    this.collecting.delete(jobId);
    this.placements.delete(jobId);
  }

  supportsBatchSnapshot(): boolean {
    return true;
  }

  registerPartitionWithProducer(
    jobId: string,
    partition: ResultPartitionId,
    _producer: TaskManagerLocation__Output,
  ): ShuffleWorkerLocation__Output[] {
    const live = this.opts.workers.placeable();
    if (live.length === 0) throw new UnavailableError('no shuffle worker is registered to write the partition to');
    const replicas = this.jobs.get(jobId)?.jobConfig.getInt('shuffle.remote.replicas') ?? 1;
    const count = Math.min(replicas, live.length);
    if (count < replicas) {
      this.opts.logger.warn(
        { jobId, replicas, workers: live.length },
        'fewer shuffle workers than replicas: the partition gets fewer copies',
      );
    }
    const chosen = [...live]
      .sort((a, b) => (this.placed.get(a.id) ?? 0) - (this.placed.get(b.id) ?? 0) || a.id.localeCompare(b.id))
      .slice(0, count);
    for (const w of chosen) this.placed.set(w.id, (this.placed.get(w.id) ?? 0) + 1);
    const workers = chosen.map((w) => ({ worker_id: w.id, address: w.address }));
    this.jobPlacements(jobId).add({ id: normalized(jobId, partition), workers });
    return workers;
  }

  holdersOf(jobId: string, partition: ResultPartitionId, _producer: TaskManagerLocation__Output): PartitionHolder[] {
    const placement = this.placements.get(jobId)?.get(partitionKey(normalized(jobId, partition)));
    if (!placement) {
      // The log's newest snapshot predates this partition (snapshot.min-pause): any worker may
      // hold it, and the one that reports it is read.
      const ids = new Set([...this.opts.workers.all().map((w) => w.id), ...this.jobPlacements(jobId).workerIds()]);
      return [...ids].map((id) => this.holder(id, ''));
    }
    return placement.workers.map((w) => this.holder(w.worker_id, w.address));
  }

  /** A worker's current address when it is registered (a restarted one may have a new port). */
  private holder(id: string, recordedAddress: string): PartitionHolder {
    return workerHolder({ worker_id: id, address: this.opts.workers.get(id)?.address ?? recordedAddress });
  }

  snapshotState(context: ShuffleMasterSnapshotContext): ShuffleMasterSnapshot | undefined {
    const bytes = this.placements.get(context.jobId)?.snapshot(context.vertexFinished);
    return bytes ? new ShuffleMasterSnapshot(bytes, !context.vertexFinished) : undefined;
  }

  restoreState(jobId: string, snapshots: readonly ShuffleMasterSnapshot[]): void {
    const placements = this.jobPlacements(jobId);
    for (const s of snapshots) placements.apply(s.state, s.isIncremental());
    this.opts.logger.info({ jobId, partitions: placements.all().length }, 'remote shuffle placements restored');
  }

  notifyPartitionRecoveryStarted(jobId: string): void {
    this.collecting.set(jobId, new Map());
    for (const w of this.opts.workers.all()) this.askWorker(jobId, w);
  }

  /** TaskManagers keep nothing under the remote shuffle: there is nothing to learn from them. */
  taskManagerReported(
    _jobId: string,
    _tm: RegisteredTaskManager,
    _partitions: readonly PartitionWithMetrics__Output[],
  ): void {}

  getAllPartitionWithMetrics(jobId: string): Promise<PartitionWithMetrics[]> {
    return Promise.resolve([...(this.collecting.get(jobId)?.values() ?? [])].flat());
  }

  async releasePartitions(
    jobId: string,
    holder: PartitionHolder,
    partitions: readonly ResultPartitionId[],
  ): Promise<void> {
    const placements = this.placements.get(jobId);
    for (const p of partitions) placements?.release(partitionKey(normalized(jobId, p)));
    const w = holder.kind === 'shuffle-worker' ? this.opts.workers.get(holder.id) : undefined;
    if (!w || partitions.length === 0) return;
    await this.opts.workers.call(w, (c) => c.ReleasePartitions, {
      epoch: this.opts.epoch,
      partitions: [...partitions],
      session_id: w.session,
    });
  }

  releaseJob(jobId: string): void {
    for (const w of this.opts.workers.all()) {
      this.opts.workers
        .call(w, (c) => c.ReleaseJob, { epoch: this.opts.epoch, job_id: jobId, session_id: w.session })
        .catch((err: unknown) =>
          this.opts.logger.warn(
            { workerId: w.id, jobId, err: errorMessage(err) },
            'releasing the job on a shuffle worker failed',
          ),
        );
    }
  }

  excludeWorkers(workerIds: readonly string[], reason: string): void {
    for (const id of workerIds) this.opts.workers.exclude(id, reason);
  }

  /** A worker registered (first time, again, or restarted): recovering jobs ask it what it holds. */
  onShuffleWorkerRegistered(worker: RegisteredShuffleWorker): void {
    this.lost.delete(worker.id);
    for (const jobId of this.collecting.keys()) this.askWorker(jobId, worker);
  }

  /** A worker died: the partitions it alone kept are lost, and their producers rerun. */
  onShuffleWorkerLost(workerId: string, reason: string): void {
    this.lost.add(workerId);
    for (const [jobId, placements] of this.placements) {
      const lostIds = placements
        .all()
        .filter(
          (p) => p.workers.some((w) => w.worker_id === workerId) && p.workers.every((w) => this.lost.has(w.worker_id)),
        )
        .map((p) => p.id);
      if (lostIds.length > 0)
        this.jobs.get(jobId)?.partitionsLost(lostIds, `shuffle worker ${workerId} lost: ${reason}`);
    }
  }

  private askWorker(jobId: string, w: RegisteredShuffleWorker): void {
    const collecting = this.collecting.get(jobId);
    if (!collecting) return;
    const holder = workerHolder({ worker_id: w.id, address: w.address });
    this.opts.workers
      .call(w, (c) => c.ListPartitions, { epoch: this.opts.epoch, job_id: jobId, session_id: w.session })
      .then(
        (res) => {
          if (this.collecting.get(jobId) !== collecting) return;
          const reports = res.partitions.filter((p) => p.partition_id).map((partition) => ({ holder, partition }));
          collecting.set(w.id, reports);
          this.jobs.get(jobId)?.partitionsReported(reports, holder);
        },
        (err: unknown) => {
          this.opts.logger.warn(
            { workerId: w.id, jobId, err: errorMessage(err) },
            'asking a shuffle worker for its partitions failed',
          );
          if (this.collecting.get(jobId) === collecting) this.jobs.get(jobId)?.partitionsReported([], holder);
        },
      );
  }

  private jobPlacements(jobId: string): JobPlacements {
    let p = this.placements.get(jobId);
    if (!p) this.placements.set(jobId, (p = new JobPlacements()));
    return p;
  }
}

function normalized(jobId: string, p: ResultPartitionId): ResultPartitionId__Output {
  return {
    job_id: p.job_id || jobId,
    vertex_id: p.vertex_id ?? '',
    subtask: Number(p.subtask ?? 0),
    attempt: Number(p.attempt ?? 0),
    epoch: Number(p.epoch ?? 0),
  };
}
