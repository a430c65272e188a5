import { ErrorCode, ReboundError, errorMessage, partitionKey } from '@rebound/core';
import type { Configuration, Logger, RecoveryReport, ResultPartitionId } from '@rebound/core';
import type { SourceSplit } from '@rebound/api';
import { describeReplayCut, type JobEventManager } from '@rebound/event-store';
import type { ExecutionVertex } from '../execution-graph.js';
import type { JobMasterContext } from '../job-master.js';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import type { BatchJobRecoveryContext, BatchJobRecoveryHandler } from './batch-job-recovery-handler.js';
import { JobEventRecorder } from './job-event-recorder.js';
import { ReplayedJobState } from './job-event-replay.js';
import { PartitionReconciliation } from './partition-reconciliation.js';
import { releaseRetainedOfLateTaskManager, releaseUntracked, type RetainedPartitionsScope } from './retained-partitions.js';

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
  private readonly scope: RetainedPartitionsScope;

  constructor(
    private readonly context: BatchJobRecoveryContext,
    private readonly events: JobEventManager,
    private readonly leader: JobMasterContext,
    private readonly gateway: TaskExecutorGateway,
    private readonly jobConfig: Configuration,
    private readonly logger: Logger,
  ) {
    this.recorder = new JobEventRecorder(
      events,
      context.coordinators,
      (ev) => context.sinkTemps.get(ev.key) ?? '',
      jobConfig.getDurationMs('execution.batch.job-recovery.snapshot.min-pause'),
      leader.clock,
      logger,
      leader.crashPoints,
    );
    this.scope = {
      jobId: context.jobId,
      epoch: leader.epoch,
      get graph() {
        return context.graph;
      },
      gateway,
      logger,
    };
  }

  async initialize(takeover: boolean): Promise<boolean> {
    await this.events.start();
    if (takeover && (await this.events.hasJobEvents())) return true;
    this.startRecording();
    return false;
  }

  /** The recorder listens to the current graph: from now on its changes go to the log. */
  private startRecording(): void {
    this.context.graph.addListener(this.recorder);
  }

  /**
   * Replays the events, rebuilds decided vertices and finished executions (with their original
   * attempts), restores the source coordinators, reconciles with the partitions the TaskManagers
   * kept, and resets what was lost. Returns false when it fell back to a restart from scratch
   * (the reason is logged and kept in the recovery report).
   */
  async startRecovering(): Promise<boolean> {
    const events = this.events;
    const startedAt = this.leader.clock.now();
    const report: RecoveryReport = {
      epoch: this.leader.epoch,
      elected_at_ms: this.leader.electedAtMs,
      started_at_ms: startedAt,
      restarted_from_scratch: false,
    };
    this.logger.info('job enters RECONCILING: replaying its events');
    const replayed = new ReplayedJobState(this.context.jobGraph);
    const result = await events.replay((record) => replayed.apply(record));
    report.replay_ms = result.durationMs;
    report.events_replayed = result.events;
    report.torn_tail_bytes_discarded = result.report.discardedBytes;
    // The lease renewal is the better witness; the newest event is a lower bound when the lock was free.
    report.old_leader_last_heard_ms = Math.max(this.leader.previousLeaderLastHeardMs ?? 0, replayed.lastEventAtMs);
    if (!result.ok) {
      const f = result.failure;
      const why = f.kind === 'handler' ? errorMessage(f.error) : f.error.message;
      return this.fallBackToScratch(report, `replaying the job events failed (${f.kind}): ${why}`);
    }
    const cut = describeReplayCut(result.report.cut);
    if (cut && result.report.cut!.expected) {
      this.logger.warn({ cut: result.report.cut }, cut);
    } else if (cut) {
      // History written after the damage is dropped and its work reruns: say so where users look.
      this.logger.error({ cut: result.report.cut }, cut);
      report.reason = cut;
      this.context.addNote(`JobMaster failover: ${cut}`);
    }
    // Before acting on the replayed history, make it the only one: what a deposed predecessor
    // still appends to its open file is ignored by every later reader.
    await events.seal(result.report);
    if (result.report.sealedBytes > 0) {
      this.logger.warn({ sealed: result.report.sealedTails }, 'ignored event bytes a deposed JobMaster wrote after an earlier takeover');
    }
    try {
      await this.applyReplay(replayed, report);
    } catch (err) {
      return this.fallBackToScratch(report, `applying the replayed events failed: ${errorMessage(err)}`);
    }
    this.leader.crashPoints?.duringReconciling();
    const reconcileStart = this.leader.clock.now();
    await this.reconcilePartitions(report);
    report.reconnect_wait_ms = this.leader.clock.now() - reconcileStart;
    report.finished_at_ms = this.leader.clock.now();
    await this.addRecoveryReport(report);
    this.logger.info({ report }, 'job recovered from a JobMaster failover');
    return true;
  }

  private async fallBackToScratch(report: RecoveryReport, reason: string): Promise<false> {
    this.logger.error({ reason }, 'recovery failed; the job restarts from scratch');
    report.restarted_from_scratch = true;
    report.reason = reason;
    report.finished_at_ms = this.leader.clock.now();
    this.context.addNote(`JobMaster failover: recovery failed, restarted from scratch: ${reason}`);
    // Start over on a clean log and a fresh graph; partitions of the old run go away.
    await this.events.stop(true);
    await this.events.start();
    await this.context.restartFromScratch();
    this.startRecording();
    for (const tm of this.context.taskManagers()) this.releaseJobOn(tm);
    await this.addRecoveryReport(report);
    return false;
  }

  private async addRecoveryReport(report: RecoveryReport): Promise<void> {
    this.leader.recoveries.push(report);
    await this.leader.saveRecoveries(this.context.jobId, this.leader.recoveries).catch((err: unknown) =>
      this.logger.warn({ err: errorMessage(err) }, 'cannot store the recovery report'),
    );
  }

  private async applyReplay(replayed: ReplayedJobState, report: RecoveryReport): Promise<void> {
    const graph = this.context.graph;
    const coordinators = this.context.coordinators;
    // What the log says goes into the graph before the recorder listens: it is in the log already.
    for (const ejv of graph.vertices) {
      const init = replayed.initialized.get(ejv.id);
      if (!init) continue;
      const ranges = init.inputs.map((i) => i.subtask_ranges.map((r) => ({ start: r.start, end: r.end })));
      if (ejv.isSource) coordinators.createSource(ejv, init.parallelism);
      graph.initializeVertex(ejv, init.parallelism, ranges, ejv.jobVertex.parallelism === 0);
      await coordinators.createUserCoordinators(ejv, false);
    }
    const dropped = this.dropFinishedNotCoveredByCoordinators(replayed);
    for (const e of replayed.finished.values()) {
      const ev = graph.executionVertex(e.vertex_id, e.subtask);
      if (!ev) throw new ReboundError(ErrorCode.EVENT_STORE_CORRUPT, `finished event for unknown subtask ${e.vertex_id}#${e.subtask}`);
      ev.attempt = e.attempt;
      ev.attemptEpoch = e.attempt_epoch;
      if (e.sink_temp_file) this.context.sinkTemps.set(ev.key, e.sink_temp_file);
      graph.markFinished(
        ev,
        e.location ?? { task_manager_id: '', address: '' },
        e.io_metrics ?? { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] },
        e.finished_at_ms,
      );
    }
    // Unfinished subtasks get attempt numbers no earlier attempt used.
    for (const ev of graph.allExecutionVertices()) {
      if (ev.state !== 'FINISHED') ev.attempt = (replayed.maxAttempt.get(ev.key) ?? -1) + 1;
    }
    report.executions_recovered = replayed.finished.size;
    this.startRecording();
    // The log still says they finished. Unless it also says they were reset, a later leader keeps
    // them once a newer snapshot follows their finished events in the log, and their output (ids
    // the coordinator has since handed out again) comes back next to their reruns.
    const droppedExecutions = replayed.dropped.map((e) => graph.executionVertex(e.vertex_id, e.subtask)!);
    if (droppedExecutions.length > 0) this.recorder.onExecutionsReset(droppedExecutions);

    let reset = 0;
    for (const [vertexId, coordinator] of coordinators.sourceEntries()) {
      const ejv = graph.vertex(vertexId);
      const finishedEvents = replayed.finishedOf(vertexId);
      const attempts = new Map(ejv.vertices.map((ev) => [ev.subtask, ev.attempt]));
      if (coordinator.supportsBatchSnapshot()) {
        const owned = new Map<number, SourceSplit[]>();
        for (const e of finishedEvents) {
          const inc = e.coordinator_increments.find((c) => c.operator_id === coordinator.operatorId);
          owned.set(e.subtask, inc ? (JSON.parse(Buffer.from(inc.state).toString('utf8')) as SourceSplit[]) : []);
        }
        await coordinator.restore(replayed.snapshots.get(coordinator.operatorId), owned, attempts);
      } else if (ejv.isFinished()) {
        // Its enumerator state is gone, but nothing of it has to run again, unless a subtask
        // must rerun later: then all of them do.
        coordinators.restartAllOnResetOf(vertexId);
        await coordinator.start();
      } else {
        const finished = ejv.vertices.filter((ev) => ev.state === 'FINISHED');
        this.logger.info({ vertexId, finished: finished.length }, 'source without batch snapshots was not finished: all its subtasks rerun');
        graph.resetForNewExecutions(finished);
        reset += finished.length;
        await coordinator.start();
        for (const ev of ejv.vertices) coordinator.setAttempt(ev.subtask, ev.attempt);
      }
    }
    for (const [vertexId, holders] of coordinators.userEntries()) {
      const ejv = graph.vertex(vertexId);
      for (const h of holders) {
        if (h.supportsBatchSnapshot()) {
          await h.resetToCheckpoint(replayed.snapshots.get(h.operatorId));
        } else {
          if (ejv.isFinished()) coordinators.restartAllOnResetOf(vertexId);
          await h.start();
        }
        // Attempts that were running at the snapshot (or that finished after it) run again.
        for (const ev of ejv.vertices) if (ev.state !== 'FINISHED') h.subtaskReset(ev.subtask, ev.attempt);
      }
    }
    report.executions_reset = reset + dropped;
  }

  /**
   * User coordinators are restored from their newest snapshot: executions of their vertices that
   * finished after it rerun, and so do all of a vertex whose coordinator has no batch snapshots
   * unless the vertex had finished (FLIP-383 drops finished events no snapshot covers).
   */
  private dropFinishedNotCoveredByCoordinators(replayed: ReplayedJobState): number {
    let dropped = 0;
    for (const [vertexId, holders] of this.context.coordinators.userEntries()) {
      for (const h of holders) if (h.supportsBatchSnapshot()) dropped += replayed.dropFinishedAfterSnapshot(vertexId, h.operatorId);
      const parallelism = replayed.initialized.get(vertexId)?.parallelism ?? 0;
      const unfinished = replayed.finishedOf(vertexId).length < parallelism;
      if (unfinished && holders.some((h) => !h.supportsBatchSnapshot())) dropped += replayed.dropFinishedAfterSnapshot(vertexId);
    }
    if (dropped > 0) this.logger.info({ dropped }, 'executions that finished after their coordinator snapshot run again');
    return dropped;
  }

  /**
   * Asks the TaskManagers for the partitions they kept, during at most
   * `execution.batch.job-recovery.previous-worker.recovery.timeout` (ended early when every
   * needed partition is back). Keeps what matches a recovered execution, releases the rest, and
   * resets the producers of needed partitions that did not come back.
   */
  private async reconcilePartitions(report: RecoveryReport): Promise<void> {
    const graph = this.context.graph;
    const needed = new Map<string, ExecutionVertex>();
    const recovered = new Map<string, ExecutionVertex>();
    for (const ev of graph.allExecutionVertices()) {
      if (ev.state !== 'FINISHED' || ev.jobVertex.consumers.length === 0) continue;
      const key = partitionKey(ev.partitionId());
      recovered.set(key, ev);
      if (ev.jobVertex.consumers.some((c) => !c.isFinished())) needed.set(key, ev);
    }
    const timeoutMs = this.jobConfig.getDurationMs('execution.batch.job-recovery.previous-worker.recovery.timeout');
    const rec = new PartitionReconciliation(new Map([...needed].map(([key, ev]) => [key, ev.location?.task_manager_id ?? ''])));
    this.reconciliation = rec;
    for (const tm of this.context.taskManagers()) this.askForPartitions(tm);
    await rec.wait(timeoutMs);
    this.reconciliation = undefined;
    // From now on a TaskManager that registers has its retained partitions checked and released.
    this.reconciled = true;

    let reusedBytes = 0;
    let releasedBytes = 0;
    const release = new Map<string, { tm: RegisteredTaskManager; ids: ResultPartitionId[] }>();
    for (const r of rec.reported) {
      const recoveredEv = recovered.get(r.key);
      // Only the copy on the TaskManager the finished event names is that execution's output.
      const ev = recoveredEv?.location?.task_manager_id === r.tm.id ? recoveredEv : undefined;
      const bytes = r.partition.total_bytes;
      if (ev && needed.has(r.key)) {
        ev.location = { task_manager_id: r.tm.id, address: r.tm.address };
        reusedBytes += bytes;
        rec.reused++;
      } else if (ev) {
        // Kept as a finished execution's output, though no consumer needs it any more.
        ev.location = { task_manager_id: r.tm.id, address: r.tm.address };
      } else {
        releasedBytes += bytes;
        const entry = release.get(r.tm.id) ?? { tm: r.tm, ids: [] };
        entry.ids.push(r.partition.partition_id!);
        release.set(r.tm.id, entry);
      }
    }
    await Promise.all(
      [...release.values()].map(({ tm, ids }) =>
        this.gateway.releasePartitions(tm, { epoch: this.leader.epoch, partitions: ids }).catch((err: unknown) =>
          this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing unneeded partitions failed'),
        ),
      ),
    );
    const missing = [...needed].filter(([key]) => !rec.has(key)).map(([, ev]) => ev);
    report.partitions_reused = rec.reused;
    report.partition_bytes_reused = reusedBytes;
    report.partitions_released = [...release.values()].reduce((n, e) => n + e.ids.length, 0);
    report.partition_bytes_released = releasedBytes;
    report.partitions_missing = missing.length;
    this.logger.info(
      { needed: needed.size, reused: rec.reused, released: report.partitions_released, missing: missing.length },
      'partitions reconciled',
    );
    if (missing.length > 0) {
      const coordinators = this.context.coordinators;
      const toReset = coordinators.withWholeSources(missing);
      coordinators.notifyOfReset(toReset);
      graph.resetForNewExecutions(toReset);
      coordinators.afterSourceResets(graph, toReset);
      report.executions_reset = (report.executions_reset ?? 0) + toReset.length;
    }
  }

  private askForPartitions(tm: RegisteredTaskManager): void {
    const rec = this.reconciliation;
    if (!rec) return;
    this.gateway
      .getAndRetainPartitionsWithMetrics(tm, { epoch: this.leader.epoch, job_id: this.context.jobId })
      .then(
        (res) => {
          if (this.reconciliation === rec) rec.add(tm, res.partitions);
          // The answer came after the window closed: nothing will use these partitions.
          else releaseUntracked(this.scope, tm, res.partitions);
        },
        (err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'asking for retained partitions failed'),
      );
  }

  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    if (this.reconciliation) {
      this.askForPartitions(tm);
    } else if (this.reconciled && retainedJobs.includes(this.context.jobId)) {
      releaseRetainedOfLateTaskManager(this.scope, tm);
    }
  }

  onJobRunning(): void {
    this.reconciled = true;
  }

  private releaseJobOn(tm: RegisteredTaskManager): void {
    this.gateway
      .disconnectJob(tm, { epoch: this.leader.epoch, job_id: this.context.jobId, release_partitions: true })
      .catch((err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing retained partitions failed'));
  }

  stop(cleanUp: boolean): Promise<void> {
    return this.events.stop(cleanUp);
  }
}
