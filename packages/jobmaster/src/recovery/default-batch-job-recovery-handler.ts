import { errorMessage, partitionKey } from '@rebound/core';
import type { HeldTask__Output, RecoveryReport, ResultPartitionId } from '@rebound/core';
import type { PartitionHolder, PartitionWithMetrics } from '../shuffle/shuffle-master.js';
import { describeReplayCut } from '@rebound/event-store';
import type { ExecutionVertex } from '../execution-graph.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import type { BatchJobRecoveryContext } from './batch-job-recovery-context.js';
import type { BatchJobRecoveryHandler } from './batch-job-recovery-handler.js';
import { JobEventRecorder } from './job-event-recorder.js';
import { ReplayedJobState } from './job-event-replay.js';
import { PartitionReconciliation } from './partition-reconciliation.js';
import { releaseRetainedOfLateTaskManager, releaseUntracked } from './retained-partitions.js';
import { ReconnectSettlement } from './reconnect-settlement.js';
import { applyReplay } from './replay-application.js';
import { TaskAdoption, type ReportedTask } from './task-adoption.js';

/**
 * FLIP-383 recovery (Flink's DefaultBatchJobRecoveryHandler): records the job's events while it
 * runs; on a takeover replays them, rebuilds decided vertices and finished executions (with their
 * original attempts), restores the coordinators, reconciles with the partitions the TaskManagers
 * kept, resets what was lost, and writes the recovery report.
 */
export class DefaultBatchJobRecoveryHandler implements BatchJobRecoveryHandler {
  private readonly recorder: JobEventRecorder;
  private reconciliation: PartitionReconciliation | undefined;
  /** Reconciliation is over: TaskManagers that show up with retained partitions lose them. */
  private reconciled = false;
  /**
   * execution.batch.job-recovery.keep-running-tasks: the TaskManagers kept this job's running
   * tasks; reconciliation adopts them instead of resetting every unfinished execution.
   */
  private readonly keepRunning: boolean;
  private adoption: TaskAdoption | undefined;
  private settlement: ReconnectSettlement | undefined;
  /**
   * Reports that came before the reconnect window opened: a ShuffleMaster whose holders are
   * not TaskManagers asks them as soon as the recovery starts, before the replay ends.
   */
  private early: { reports: readonly PartitionWithMetrics[]; from?: PartitionHolder }[] | undefined = [];
  private takeover = false;
  /** This leader recovers the job from its events (it did not start it afresh). */
  private recovered = false;

  constructor(private readonly ctx: BatchJobRecoveryContext) {
    this.keepRunning = ctx.jobConfig.getBoolean('execution.batch.job-recovery.keep-running-tasks');
    this.recorder = new JobEventRecorder({
      jobId: ctx.job.jobId,
      events: ctx.events,
      coordinators: ctx.coordinators,
      shuffleMaster: ctx.shuffleMaster,
      snapshotMinPauseMs: ctx.jobConfig.getDurationMs('execution.batch.job-recovery.snapshot.min-pause'),
      clock: ctx.clock,
      logger: ctx.logger,
      crashPoints: ctx.crashPoints,
    });
  }

  async initialize(takeover: boolean): Promise<boolean> {
    this.takeover = takeover;
    await this.ctx.events.start();
    if (takeover && (await this.ctx.events.hasJobEvents())) {
      this.recovered = true;
      return true;
    }
    this.startRecording();
    return false;
  }

  /** The recorder listens to the current graph: from now on its changes go to the log. */
  private startRecording(): void {
    this.ctx.job.graph.addListener(this.recorder);
  }

  /**
   * Replays the events, rebuilds decided vertices and finished executions (with their original
   * attempts), restores the source coordinators, reconciles with the partitions the TaskManagers
   * kept, and resets what was lost. Returns false when it fell back to a restart from scratch
   * (the reason is logged and kept in the recovery report).
   */
  async startRecovering(): Promise<boolean> {
    const events = this.ctx.events;
    const startedAt = this.ctx.clock.now();
    const report: RecoveryReport = {
      epoch: this.ctx.epoch,
      elected_at_ms: this.ctx.electedAtMs,
      started_at_ms: startedAt,
      restarted_from_scratch: false,
    };
    this.ctx.logger.info('job enters RECONCILING: replaying its events');
    this.ctx.shuffleMaster.notifyPartitionRecoveryStarted(this.ctx.job.jobId);
    const replayed = new ReplayedJobState(this.ctx.job.jobGraph);
    const result = await events.replay((record) => replayed.apply(record));
    report.replay_ms = result.durationMs;
    report.events_replayed = result.events;
    report.torn_tail_bytes_discarded = result.report.discardedBytes;
    // The lease renewal is the better witness; the newest event is a lower bound when the lock was free.
    report.old_leader_last_heard_ms = Math.max(this.ctx.previousLeaderLastHeardMs ?? 0, replayed.lastEventAtMs);
    if (!result.ok) {
      const f = result.failure;
      const why = f.kind === 'handler' ? errorMessage(f.error) : f.error.message;
      return this.fallBackToScratch(report, `replaying the job events failed (${f.kind}): ${why}`);
    }
    const cut = describeReplayCut(result.report.cut);
    if (cut && result.report.cut!.expected) {
      this.ctx.logger.warn({ cut: result.report.cut }, cut);
    } else if (cut) {
      // History written after the damage is dropped and its work reruns: say so where users look.
      this.ctx.logger.error({ cut: result.report.cut }, cut);
      report.reason = cut;
      this.ctx.job.addNote(`JobMaster failover: ${cut}`);
    }
    // Before acting on the replayed history, make it the only one: what a deposed predecessor
    // still appends to its open file is ignored by every later reader.
    await events.seal(result.report);
    if (result.report.sealedBytes > 0) {
      this.ctx.logger.warn(
        { sealed: result.report.sealedTails },
        'ignored event bytes a deposed JobMaster wrote after an earlier takeover',
      );
    }
    try {
      await applyReplay(
        {
          ctx: this.ctx,
          keepRunning: this.keepRunning,
          recorder: this.recorder,
          startRecording: () => this.startRecording(),
        },
        replayed,
        report,
      );
    } catch (err) {
      return this.fallBackToScratch(report, `applying the replayed events failed: ${errorMessage(err)}`);
    }
    this.ctx.crashPoints?.duringReconciling();
    const reconcileStart = this.ctx.clock.now();
    await this.reconcilePartitions(report);
    report.reconnect_wait_ms = this.ctx.clock.now() - reconcileStart;
    report.finished_at_ms = this.ctx.clock.now();
    await this.addRecoveryReport(report);
    this.ctx.logger.info({ report }, 'job recovered from a JobMaster failover');
    return true;
  }

  private async fallBackToScratch(report: RecoveryReport, reason: string): Promise<false> {
    this.ctx.logger.error({ reason }, 'recovery failed; the job restarts from scratch');
    report.restarted_from_scratch = true;
    report.reason = reason;
    report.finished_at_ms = this.ctx.clock.now();
    this.ctx.job.addNote(`JobMaster failover: recovery failed, restarted from scratch: ${reason}`);
    // Start over on a clean log and a fresh graph; partitions of the old run go away.
    await this.ctx.events.stop(true);
    await this.ctx.events.start();
    await this.ctx.job.restartFromScratch();
    this.startRecording();
    for (const tm of this.ctx.registry.all()) this.releaseJobOn(tm);
    await this.addRecoveryReport(report);
    return false;
  }

  private async addRecoveryReport(report: RecoveryReport): Promise<void> {
    this.ctx.recoveries.push(report);
    await this.ctx
      .saveRecoveries(this.ctx.job.jobId, this.ctx.recoveries)
      .catch((err: unknown) => this.ctx.logger.warn({ err: errorMessage(err) }, 'cannot store the recovery report'));
  }

  /**
   * Asks the TaskManagers for the partitions and tasks they kept, during at most
   * `execution.batch.job-recovery.previous-worker.recovery.timeout` (ended early when every
   * needed partition is back). The partitions reach the ShuffleMaster, which knows where each is
   * kept; what it then has of the job that matches a recovered execution is kept, the rest
   * released, and the producers of needed partitions that did not come back are reset.
   */
  private async reconcilePartitions(report: RecoveryReport): Promise<void> {
    const graph = this.ctx.job.graph;
    const needed = new Map<string, ExecutionVertex>();
    const recovered = new Map<string, ExecutionVertex>();
    for (const ev of graph.allExecutionVertices()) {
      if (ev.state !== 'FINISHED' || ev.jobVertex.consumers.length === 0) continue;
      const key = partitionKey(ev.partitionId());
      recovered.set(key, ev);
      if (ev.jobVertex.consumers.some((c) => !c.isFinished())) needed.set(key, ev);
    }
    const shuffleMaster = this.ctx.shuffleMaster;
    const jobId = this.ctx.job.jobId;
    // Where each finished execution's partition is kept: its TaskManager, or shuffle workers.
    const holderIds = (ev: ExecutionVertex): string[] =>
      ev.location ? shuffleMaster.holdersOf(jobId, ev.partitionId(), ev.location).map((h) => h.id) : [];
    const timeoutMs = this.ctx.jobConfig.getDurationMs('execution.batch.job-recovery.previous-worker.recovery.timeout');
    const adoption = this.keepRunning ? new TaskAdoption() : undefined;
    // The attempts that may be running somewhere: unfinished subtasks whose inputs are all there.
    const awaited = adoption
      ? graph
          .allExecutionVertices()
          .filter((ev) => ev.state !== 'FINISHED' && ev.jobVertex.producers.every((p) => p.isFinished()))
          .map((ev) => ev.key)
      : [];
    const settlement = new ReconnectSettlement(
      [
        ...this.ctx.registry.all().map((tm) => tm.id),
        // The TaskManagers the log names: where its finished executions ran.
        ...graph
          .allExecutionVertices()
          .filter((ev) => ev.state === 'FINISHED')
          .map((ev) => ev.location?.task_manager_id ?? ''),
        // And the holders that keep the needed partitions (shuffle workers, with remote shuffle).
        ...[...needed.values()].flatMap(holderIds),
      ].filter((id) => id !== ''),
      this.ctx.taskManagerDirectory,
      this.ctx.logger,
    );
    const rec = new PartitionReconciliation(
      new Map([...needed].map(([key, ev]) => [key, holderIds(ev)])),
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
    if (adoption) {
      this.adoptReportedTasks(adoption, report);
      // Adoption may have finished producers: what is needed and recovered is counted anew.
      needed.clear();
      for (const ev of graph.allExecutionVertices()) {
        if (ev.state !== 'FINISHED' || ev.jobVertex.consumers.length === 0) continue;
        const key = partitionKey(ev.partitionId());
        recovered.set(key, ev);
        if (ev.jobVertex.consumers.some((c) => !c.isFinished())) needed.set(key, ev);
      }
    }

    const reports = await shuffleMaster.getAllPartitionWithMetrics(jobId);
    let reused = 0;
    let reusedBytes = 0;
    let releasedBytes = 0;
    const reusedKeys = new Set<string>();
    let reusedOnWorkers = 0;
    const release = new Map<string, { holder: PartitionHolder; ids: ResultPartitionId[] }>();
    for (const r of reports) {
      const key = partitionKey(r.partition.partition_id!);
      const recoveredEv = recovered.get(key);
      // Only a copy on a holder the finished execution wrote to is that execution's output.
      const ev = recoveredEv && holderIds(recoveredEv).includes(r.holder.id) ? recoveredEv : undefined;
      const bytes = r.partition.total_bytes;
      // A TaskManager shuffle partition is read where it was found; a shuffle worker's address is
      // the ShuffleMaster's to know.
      if (ev && r.holder.kind === 'taskmanager') {
        ev.location = { task_manager_id: r.holder.id, address: r.holder.address };
      }
      if (ev && needed.has(key)) {
        // Replicas report the same partition: it is reused once.
        if (!reusedKeys.has(key)) {
          reusedKeys.add(key);
          reusedBytes += bytes;
          reused++;
          if (r.holder.kind === 'shuffle-worker') reusedOnWorkers++;
        }
      } else if (ev) {
        // Kept as a finished execution's output, though no consumer needs it any more.
      } else {
        releasedBytes += bytes;
        const entry = release.get(r.holder.id) ?? { holder: r.holder, ids: [] };
        entry.ids.push(r.partition.partition_id!);
        release.set(r.holder.id, entry);
      }
    }
    await Promise.all(
      [...release.values()].map(({ holder, ids }) =>
        shuffleMaster
          .releasePartitions(jobId, holder, ids)
          .catch((err: unknown) =>
            this.ctx.logger.warn({ holder: holder.id, err: errorMessage(err) }, 'releasing unneeded partitions failed'),
          ),
      ),
    );
    const missing = [...needed]
      .filter(([key, ev]) => !holderIds(ev).some((id) => rec.reportedBy(key, id)))
      .map(([, ev]) => ev);
    report.partitions_reused = reused;
    report.partitions_reused_on_shuffle_workers = reusedOnWorkers;
    report.partition_bytes_reused = reusedBytes;
    report.partitions_released = [...release.values()].reduce((n, e) => n + e.ids.length, 0);
    report.partition_bytes_released = releasedBytes;
    report.partitions_missing = missing.length;
    this.ctx.logger.info(
      { needed: needed.size, reused, released: report.partitions_released, missing: missing.length },
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

  private askForPartitions(tm: RegisteredTaskManager): void {
    const rec = this.reconciliation;
    if (!rec) return;
    const adoption = this.adoption;
    const settlement = this.settlement;
    settlement?.asked(tm.id);
    const req = { epoch: this.ctx.epoch, job_id: this.ctx.job.jobId, adopt_tasks: adoption !== undefined };
    this.ctx.gateway.getAndRetainPartitionsWithMetrics(tm, req).then(
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

  onJobRunning(): void {
    // A takeover that found no events starts the job afresh: what TaskManagers kept of it
    // (partitions, tasks kept running) is of no use, and kept tasks would hold their slots.
    if (this.takeover && !this.recovered) {
      for (const tm of this.ctx.registry.all()) releaseRetainedOfLateTaskManager(this.ctx, tm);
    }
    this.reconciled = true;
  }

  private releaseJobOn(tm: RegisteredTaskManager): void {
    this.ctx.gateway
      .disconnectJob(tm, { epoch: this.ctx.epoch, job_id: this.ctx.job.jobId, release_partitions: true })
      .catch((err: unknown) =>
        this.ctx.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing retained partitions failed'),
      );
  }

  vertexDecisionsDurable(): Promise<void> | undefined {
    // Without keep-running-tasks a task dies with this leader: the buffered write is enough.
    if (!this.keepRunning || !this.recorder.enabled || !this.ctx.events.isRunning()) return undefined;
    // A failed write disables the store (it logs why); the job goes on, unrecoverable.
    return this.ctx.events.flush().catch(() => undefined);
  }

  stop(cleanUp: boolean): Promise<void> {
    return this.ctx.events.stop(cleanUp);
  }
}
