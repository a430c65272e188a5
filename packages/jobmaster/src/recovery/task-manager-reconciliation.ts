import { errorMessage } from '@rebound/core';
import type {
  GetPartitionsRequest,
  GetPartitionsResponse__Output,
  HeldTask__Output,
  RecoveryReport,
  ResultPartitionId,
} from '@rebound/core';
import type { PartitionHolder, PartitionWithMetrics } from '../shuffle/shuffle-master.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import type { BatchJobRecoveryContext } from './batch-job-recovery-context.js';
import { FinishedOutputs, type FinishedOutput } from './finished-outputs.js';
import { PartitionReconciliation } from './partition-reconciliation.js';
import { releaseRetainedOfLateTaskManager, releaseUntracked } from './retained-partitions.js';
import { ReconnectSettlement } from './reconnect-settlement.js';
import { TaskAdoption, type ReportedTask } from './task-adoption.js';

/**
 * A recovered job's reconciliation with what the TaskManagers (and shuffle workers) kept through
 * the failover: the reconnect window, the tasks they kept running, the partitions reused or
 * released, and what a TaskManager that shows up too late still holds of the job.
 */
export class TaskManagerReconciliation {
  private reconciliation: PartitionReconciliation | undefined;
  /** Reconciliation is over: TaskManagers that show up with retained partitions lose them. */
  private reconciled = false;
  private adoption: TaskAdoption | undefined;
  private settlement: ReconnectSettlement | undefined;
  /**
   * Reports that came before the reconnect window opened: a ShuffleMaster whose holders are
   * not TaskManagers asks them as soon as the recovery starts, before the replay ends.
   */
  private early: { reports: readonly PartitionWithMetrics[]; from?: PartitionHolder }[] | undefined = [];
  /** Requests sent as the recovery started (askEarly), by the TaskManager asked; the window takes them over. */
  private readonly askedEarly = new Map<RegisteredTaskManager, Promise<GetPartitionsResponse__Output>>();

  /** `keepRunning`: execution.batch.job-recovery.keep-running-tasks of the job. */
  constructor(
    private readonly ctx: BatchJobRecoveryContext,
    private readonly keepRunning: boolean,
  ) {}

  /**
   * Asks the TaskManagers for the partitions and tasks they kept, during at most
   * `execution.batch.job-recovery.previous-worker.recovery.timeout` (ended early when every
   * needed partition is back). The partitions reach the ShuffleMaster, which knows where each is
   * kept; what it then has of the job that matches a recovered execution is kept, the rest
   * released, and the producers of needed partitions that did not come back are reset.
   */
  async reconcilePartitions(report: RecoveryReport): Promise<void> {
    const graph = this.ctx.job.graph;
    const shuffleMaster = this.ctx.shuffleMaster;
    const jobId = this.ctx.job.jobId;
    let outputs = FinishedOutputs.of(graph, shuffleMaster);
    const timeoutMs = this.windowMs();
    const adoption = this.keepRunning ? new TaskAdoption() : undefined;
    // The attempts that may be running somewhere: unfinished subtasks whose inputs are all there.
    // (Per vertex, not per subtask: a vertex's isFinished() looks at all its subtasks.)
    const awaited = adoption
      ? graph.vertices
          .filter((ejv) => ejv.producers.every((p) => p.isFinished()))
          .flatMap((ejv) => ejv.vertices.filter((ev) => ev.state !== 'FINISHED').map((ev) => ev.key))
      : [];
    const settlement = new ReconnectSettlement(
      [
        ...this.ctx.registry.all().map((tm) => tm.id),
        // The TaskManagers the log names: where its finished executions ran.
        ...this.finishedLocations(),
        // And the holders that keep the needed partitions (shuffle workers, with remote shuffle).
        ...outputs.neededHolders(),
      ].filter((id) => id !== ''),
      this.ctx.taskManagerDirectory,
      this.ctx.logger,
    );
    const rec = new PartitionReconciliation(
      outputs,
      awaited,
      (key) => adoption?.hasReport(key) ?? true,
      () => settlement.allSettled(),
    );
    this.reconciliation = rec;
    this.adoption = adoption;
    this.settlement = settlement;
    for (const { reports, from } of this.early ?? []) this.onPartitionsReported(reports, from);
    this.early = undefined;
    for (const tm of this.ctx.registry.all()) this.askForPartitions(tm);
    // Asked early but registered anew since: the new registration was asked now.
    this.askedEarly.clear();
    const pollMs = this.ctx.jobConfig.getDurationMs('high-availability.lease.poll-interval');
    const stopWatching = settlement.watch(pollMs, () => rec.recheck());
    report.reconnect_wait_ended = await rec.wait(timeoutMs);
    stopWatching();
    this.ctx.logger.info(
      {
        waitedForMs: settlement.elapsedMs(),
        ended: report.reconnect_wait_ended,
        settled: settlement.allSettled(),
        ...settlement.describe(),
      },
      'reconnect wait over',
    );
    this.settlement = undefined;
    this.reconciliation = undefined;
    this.adoption = undefined;
    // From now on a TaskManager that registers has its retained partitions checked and released.
    this.reconciled = true;
    if (adoption) this.adoptReportedTasks(adoption, report);
    // Counted anew: adoption may have finished producers, and the ShuffleMaster has learnt where
    // partitions are kept.
    outputs = FinishedOutputs.of(graph, shuffleMaster);

    const reports = await shuffleMaster.getAllPartitionWithMetrics(jobId);
    let reused = 0;
    let reusedBytes = 0;
    let releasedBytes = 0;
    const reusedOutputs = new Set<FinishedOutput>();
    let reusedOnWorkers = 0;
    const release = new Map<string, { holder: PartitionHolder; ids: ResultPartitionId[] }>();
    for (const r of reports) {
      const output = outputs.find(r.partition.partition_id!);
      // Only a copy on a holder the finished execution wrote to is that execution's output.
      const own = output?.holders.includes(r.holder.id) ? output : undefined;
      const bytes = r.partition.total_bytes;
      // A TaskManager shuffle partition is read where it was found; a shuffle worker's address is
      // the ShuffleMaster's to know.
      const location = own?.ev.location;
      if (
        own &&
        r.holder.kind === 'taskmanager' &&
        (location?.task_manager_id !== r.holder.id || location.address !== r.holder.address)
      ) {
        own.ev.location = { task_manager_id: r.holder.id, address: r.holder.address };
      }
      if (own?.needed) {
        // Replicas report the same partition: it is reused once.
        if (!reusedOutputs.has(own)) {
          reusedOutputs.add(own);
          reusedBytes += bytes;
          reused++;
          if (r.holder.kind === 'shuffle-worker') reusedOnWorkers++;
        }
      } else if (own) {
        // Kept as a finished execution's output, though no consumer needs it any more.
      } else {
        releasedBytes += bytes;
        const entry = release.get(r.holder.id) ?? { holder: r.holder, ids: [] };
        entry.ids.push(r.partition.partition_id!);
        release.set(r.holder.id, entry);
      }
    }
    // Not awaited: nothing reads these partitions, and the job need not wait for their holders.
    void Promise.all(
      [...release.values()].map(({ holder, ids }) =>
        shuffleMaster
          .releasePartitions(jobId, holder, ids)
          .catch((err: unknown) =>
            this.ctx.logger.warn({ holder: holder.id, err: errorMessage(err) }, 'releasing unneeded partitions failed'),
          ),
      ),
    );
    const missing = outputs.needed.filter((o) => !o.holders.some((id) => rec.reportedBy(o, id))).map((o) => o.ev);
    report.partitions_reused = reused;
    report.partitions_reused_on_shuffle_workers = reusedOnWorkers;
    report.partition_bytes_reused = reusedBytes;
    report.partitions_released = [...release.values()].reduce((n, e) => n + e.ids.length, 0);
    report.partition_bytes_released = releasedBytes;
    report.partitions_missing = missing.length;
    this.ctx.logger.info(
      { needed: outputs.needed.length, reused, released: report.partitions_released, missing: missing.length },
      'partitions reconciled',
    );
    if (missing.length > 0) {
      const coordinators = this.ctx.coordinators;
      const toReset = coordinators.withWholeSources(missing);
      coordinators.notifyOfReset(toReset);
      graph.resetForNewExecutions(toReset);
      coordinators.afterSourceResets(graph, toReset);
      report.executions_reset = (report.executions_reset ?? 0) + toReset.length;
    }
  }

  /** The TaskManagers where the log says finished executions ran. */
  private finishedLocations(): Set<string> {
    const ids = new Set<string>();
    for (const ejv of this.ctx.job.graph.vertices)
      for (const ev of ejv.vertices) if (ev.state === 'FINISHED' && ev.location) ids.add(ev.location.task_manager_id);
    return ids;
  }

  /**
   * Adopts the reported attempts the log allows (TaskAdoption), records the finished ones, cancels
   * the rest, and tells the coordinators: `subtaskReset` only for subtasks that did not survive.
   */
  private adoptReportedTasks(adoption: TaskAdoption, report: RecoveryReport): void {
    const graph = this.ctx.job.graph;
    const coordinators = this.ctx.coordinators;
    const outcome = adoption.decide(graph, coordinators, this.ctx.registry, this.ctx.clock.now());
    const kept = new Set([...outcome.adopted, ...outcome.finished]);
    for (const [vertexId, source] of coordinators.sourceEntries()) {
      if (!source.supportsBatchSnapshot()) continue;
      for (const ev of graph.vertex(vertexId).vertices)
        if (ev.state !== 'FINISHED' && !kept.has(ev)) source.setAttempt(ev.subtask, ev.attempt);
    }
    for (const [vertexId, holders] of coordinators.userEntries()) {
      for (const h of holders)
        for (const ev of graph.vertex(vertexId).vertices)
          if (ev.state !== 'FINISHED' && !kept.has(ev)) h.subtaskReset(ev.subtask, ev.attempt);
    }
    this.cancelReported(outcome.cancel);
    report.running_tasks_adopted = outcome.adopted.length;
    report.finished_tasks_reported = outcome.finished.length;
    this.ctx.logger.info(
      { adopted: outcome.adopted.length, finished: outcome.finished.length, canceled: outcome.cancel.length },
      'running tasks kept by the TaskManagers reconciled',
    );
  }

  /** Attempts a TaskManager kept that this leader does not: canceled there, never adopted. */
  private cancelReported(tasks: readonly ReportedTask[]): void {
    for (const { tm, task } of tasks) {
      if (task.state !== 'RUNNING' || task.deploy_epoch >= this.ctx.epoch) continue;
      this.ctx.gateway
        .cancelTask(tm, { epoch: this.ctx.epoch, execution: task.execution, deploy_epoch: task.deploy_epoch })
        .catch((err: unknown) =>
          this.ctx.logger.warn(
            { taskManagerId: tm.id, err: errorMessage(err) },
            'canceling a kept task this leader does not adopt failed',
          ),
        );
    }
  }

  private cancelRunningOf(tm: RegisteredTaskManager, tasks: readonly HeldTask__Output[]): void {
    this.cancelReported(tasks.map((task) => ({ tm, task })));
  }

  /**
   * Asks the TaskManagers registered now for what they kept of the job as the recovery starts, so
   * that they gather and send it (10,000s of partitions) and this leader decodes it while the log
   * replays, not after. The window uses the answers once it opens, as if they had come then.
   * With keep-running-tasks the request also hands the TaskManager's kept tasks over to this
   * leader: the job is RECONCILING from before the replay, so their updates and requests are
   * refused (and retried) until the decision, as they are during the window; and since no leader
   * answers them meanwhile (an older one is no longer obeyed), what they report now is still what
   * they hold then.
   */
  askEarly(): void {
    // A window of 0 reuses nothing, and answers already in would be.
    if (this.windowMs() === 0) return;
    for (const tm of this.ctx.registry.all()) {
      const asked = this.ctx.gateway.getAndRetainPartitionsWithMetrics(tm, this.partitionsRequest());
      // A failure is the window's to handle, or nobody's if the recovery never gets there.
      asked.catch(() => {});
      this.askedEarly.set(tm, asked);
    }
  }

  /** execution.batch.job-recovery.previous-worker.recovery.timeout of the job. */
  private windowMs(): number {
    return this.ctx.jobConfig.getDurationMs('execution.batch.job-recovery.previous-worker.recovery.timeout');
  }

  private partitionsRequest(): GetPartitionsRequest {
    return { epoch: this.ctx.epoch, job_id: this.ctx.job.jobId, adopt_tasks: this.keepRunning };
  }

  private askForPartitions(tm: RegisteredTaskManager): void {
    const rec = this.reconciliation;
    if (!rec) return;
    const adoption = this.adoption;
    const settlement = this.settlement;
    settlement?.asked(tm.id);
    const early = this.askedEarly.get(tm);
    this.askedEarly.delete(tm);
    const asked = early ?? this.ctx.gateway.getAndRetainPartitionsWithMetrics(tm, this.partitionsRequest());
    asked.then(
      (res) => {
        if (this.reconciliation === rec) {
          adoption?.add(tm, res.tasks);
          settlement?.answered(tm.id);
          // Back through onPartitionsReported, which tells `rec`.
          this.ctx.shuffleMaster.taskManagerReported(this.ctx.job.jobId, tm, res.partitions);
          return;
        }
        // The answer came after the window closed: nothing will use these partitions, and the
        // tasks (which answer to this leader now) are canceled, not adopted.
        releaseUntracked(this.ctx, tm, res.partitions);
        this.cancelRunningOf(tm, res.tasks);
      },
      (err: unknown) => {
        this.ctx.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'asking for retained partitions failed');
        // Nothing more will come from it in this window (what it kept is canceled when it does).
        if (this.reconciliation === rec) {
          settlement?.answered(tm.id);
          rec.recheck();
        }
      },
    );
  }

  onPartitionsReported(reports: readonly PartitionWithMetrics[], from?: PartitionHolder): void {
    if (this.early && !this.reconciliation && !this.reconciled) {
      this.early.push({ reports, from });
      return;
    }
    if (from) this.settlement?.answered(from.id);
    this.reconciliation?.add(reports);
  }

  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    if (this.reconciliation) {
      this.askForPartitions(tm);
    } else if (this.reconciled && retainedJobs.includes(this.ctx.job.jobId)) {
      releaseRetainedOfLateTaskManager(this.ctx, tm);
    }
  }

  /** The job runs: from now on a TaskManager that registers loses what it kept of this job. */
  onJobRunning(): void {
    this.reconciled = true;
    // A recovery that fell back to a restart from scratch never took them over.
    this.askedEarly.clear();
  }
}
