import { errorMessage } from '@rebound/core';
import type { RecoveryReport } from '@rebound/core';
import type { PartitionHolder, PartitionWithMetrics } from '../shuffle/shuffle-master.js';
import { describeReplayCut } from '@rebound/event-store';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import type { BatchJobRecoveryContext } from './batch-job-recovery-context.js';
import type { BatchJobRecoveryHandler } from './batch-job-recovery-handler.js';
import { JobEventRecorder } from './job-event-recorder.js';
import { ReplayedJobState } from './job-event-replay.js';
import { applyReplay } from './replay-application.js';
import { releaseRetainedOfLateTaskManager } from './retained-partitions.js';
import { TaskManagerReconciliation } from './task-manager-reconciliation.js';

/**
 * FLIP-383 recovery (Flink's DefaultBatchJobRecoveryHandler): records the job's events while it
 * runs; on a takeover replays them, rebuilds decided vertices and finished executions (with their
 * original attempts), restores the coordinators, reconciles with the partitions the TaskManagers
 * kept, resets what was lost, and writes the recovery report.
 */
export class DefaultBatchJobRecoveryHandler implements BatchJobRecoveryHandler {
  private readonly recorder: JobEventRecorder;
  /**
   * execution.batch.job-recovery.keep-running-tasks: the TaskManagers kept this job's running
   * tasks; reconciliation adopts them instead of resetting every unfinished execution.
   */
  private readonly keepRunning: boolean;
  private readonly reconciliation: TaskManagerReconciliation;
  private takeover = false;
  /** This leader recovers the job from its events (it did not start it afresh). */
  private recovered = false;

  constructor(private readonly ctx: BatchJobRecoveryContext) {
    this.keepRunning = ctx.jobConfig.getBoolean('execution.batch.job-recovery.keep-running-tasks');
    this.recorder = new JobEventRecorder({
      jobId: ctx.job.jobId,
      epoch: ctx.epoch,
      events: ctx.events,
      coordinators: ctx.coordinators,
      shuffleMaster: ctx.shuffleMaster,
      snapshotMinPauseMs: ctx.jobConfig.getDurationMs('execution.batch.job-recovery.snapshot.min-pause'),
      clock: ctx.clock,
      logger: ctx.logger,
      crashPoints: ctx.crashPoints,
    });
    this.reconciliation = new TaskManagerReconciliation(ctx, this.keepRunning);
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
    this.reconciliation.askEarly();
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
    this.ctx.job.replayApplied();
    this.ctx.crashPoints?.duringReconciling();
    const reconcileStart = this.ctx.clock.now();
    await this.reconciliation.reconcilePartitions(report);
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
    this.ctx.job.replayApplied();
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

  onPartitionsReported(reports: readonly PartitionWithMetrics[], from?: PartitionHolder): void {
    this.reconciliation.onPartitionsReported(reports, from);
  }

  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    this.reconciliation.onTaskManagerRegistered(tm, retainedJobs);
  }

  onJobRunning(): void {
    // A takeover that found no events starts the job afresh: what TaskManagers kept of it
    // (partitions, tasks kept running) is of no use, and kept tasks would hold their slots.
    if (this.takeover && !this.recovered) {
      for (const tm of this.ctx.registry.all()) releaseRetainedOfLateTaskManager(this.ctx, tm);
    }
    this.reconciliation.onJobRunning();
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
