import { ErrorCode, ReboundError, attemptKey, errorMessage, partitionKey } from '@rebound/core';
import type {
  Clock,
  Configuration,
  CoordinationRequest__Output,
  CoordinationResponse,
  ExecutionAttemptId__Output,
  IOMetrics__Output,
  JobGraph__Output,
  JobStatus,
  Logger,
  PartitionWithMetrics__Output,
  RecoveryReport,
  ResultPartitionId,
  ResultPartitionId__Output,
  SplitRequest__Output,
  SplitResponse,
  TaskDeploymentDescriptor,
  TaskExecutionState__Output,
  VertexStatus,
} from '@rebound/core';
import type { SourceSplit, Transformation } from '@rebound/api';
import { describeReplayCut, type JobEventManager } from '@rebound/event-store';
import {
  ExecutionGraph,
  TERMINAL_JOB_STATES,
  type ExecutionJobVertex,
  type ExecutionVertex,
  type JobState,
} from './execution-graph.js';
import { decideParallelismAndInputs, type SubpartitionRange } from './parallelism-decider.js';
import type { CrashPoints } from './crash-points.js';
import { JobEventRecorder } from './job-event-recorder.js';
import { ReplayedJobState } from './job-event-replay.js';
import { PartitionReconciliation } from './partition-reconciliation.js';
import { OperatorCoordinatorHolder } from './operator-coordinator-holder.js';
import { SourceCoordinator } from './source-coordinator.js';
import { applyCommit, sinkFinalFile, sinkTempFile, type CommitManifest } from './sink-committer.js';
import type { RegisteredTaskManager, TaskManagerRegistry } from './task-manager-registry.js';

/** What the JobMaster needs from the leader process around it. */
export interface JobMasterContext {
  readonly epoch: number;
  readonly jobmasterId: string;
  readonly address: string;
  readonly config: Configuration;
  readonly registry: TaskManagerRegistry;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Persists the commit manifest before any file is renamed. */
  saveCommitManifest(jobId: string, manifest: CommitManifest): Promise<void>;
  /** Called once when the job reaches a globally terminal state. */
  onTerminal(job: JobMaster): Promise<void>;
  /** Something changed that may let other jobs schedule (a slot was freed). */
  onSlotsFreed(): void;
  /** The job's event log, when batch job recovery is enabled for it. */
  readonly events?: JobEventManager;
  /** Test-only crash points of this process (undefined unless debug.crash.* is set). */
  readonly crashPoints?: CrashPoints;
  /** When this leader was elected (for the recovery report). */
  readonly electedAtMs: number;
  /** When the previous leader was last heard of, when this leadership took over its expired lease. */
  readonly previousLeaderLastHeardMs?: number;
  /** Recovery reports of earlier failovers, kept with the job. */
  readonly recoveries: RecoveryReport[];
  saveRecoveries(jobId: string, reports: readonly RecoveryReport[]): Promise<void>;
}

interface PendingRestart {
  readonly notBeforeMs: number;
}

/**
 * Runs one job: the AdaptiveBatchScheduler's decisions (when a vertex is initialized, with which
 * parallelism; when a subtask is deployed), failover (restart the failed task, rerun producers of
 * lost partitions) and the final commit of the sinks.
 */
export class JobMaster {
  graph: ExecutionGraph;
  state: JobState = 'CREATED';
  failure = '';
  restarts = 0;
  finishedAtMs = 0;
  readonly notes: string[] = [];
  private readonly coordinators = new Map<string, SourceCoordinator>();
  /** User coordinators (`DataSet.process(create, { coordinator })`) by vertex id, created with the vertex. */
  private readonly userCoordinators = new Map<string, OperatorCoordinatorHolder[]>();
  private readonly restartDelays = new Map<string, PendingRestart>();
  private readonly sinkTemps = new Map<string, string>();
  private readonly logger: Logger;
  private readonly maxRestarts: number;
  private readonly restartDelayMs: number;
  private readonly maxParallelism: number;
  private readonly jobConfig: Configuration;
  private restartTimer: NodeJS.Timeout | undefined;
  private terminalReported = false;
  private recorder: JobEventRecorder | undefined;
  /** Sources without batch snapshots recovered as finished: any reset of one subtask resets all. */
  private readonly restartAllOnReset = new Set<string>();
  private reconciliation: PartitionReconciliation | undefined;
  /** Reconciliation is over: TaskManagers that show up with retained partitions lose them. */
  private reconciled = false;
  /** Every task finished and the sinks are being committed: the job can no longer fail or be canceled. */
  private committing = false;

  constructor(
    readonly jobGraph: JobGraph__Output,
    private readonly operators: ReadonlyMap<string, Transformation>,
    private readonly ctx: JobMasterContext,
  ) {
    this.graph = new ExecutionGraph(jobGraph);
    this.logger = ctx.logger.child({ component: 'JobMaster', jobId: jobGraph.job_id });
    this.jobConfig = ctx.config.with(jobGraph.config);
    if (ctx.events) {
      this.recorder = new JobEventRecorder(
        ctx.events,
        this.coordinators,
        this.userCoordinators,
        (ev) => this.sinkTemps.get(ev.key) ?? '',
        this.jobConfig.getDurationMs('execution.batch.job-recovery.snapshot.min-pause'),
        ctx.clock,
        this.logger,
        ctx.crashPoints,
      );
      this.graph.addListener(this.recorder);
    }
    this.maxRestarts = this.jobConfig.getInt('restart-strategy.fixed-delay.attempts');
    this.restartDelayMs = this.jobConfig.getDurationMs('restart-strategy.fixed-delay.delay');
    this.maxParallelism = this.jobConfig.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism');
  }

  get jobId(): string {
    return this.jobGraph.job_id;
  }
  get name(): string {
    return this.jobGraph.name;
  }
  isTerminal(): boolean {
    return TERMINAL_JOB_STATES.has(this.state);
  }

  /**
   * Starts the job. `takeover`: a previous leader ran it; with batch job recovery enabled and
   * events recorded, its progress is recovered instead of starting over.
   */
  async start(takeover = false): Promise<void> {
    try {
      const events = this.ctx.events;
      if (events) await events.start();
      if (takeover && events && (await events.hasJobEvents())) {
        await this.recover(events);
      }
      // Also after a recovery: a replay that kept no initialization of a source (its events
      // were cut off as a torn tail) must start that source afresh, as a new job would.
      for (const ejv of this.graph.vertices) {
        if (ejv.isSource && !ejv.isInitialized) await this.initializeSourceVertex(ejv);
      }
    } catch (err) {
      await this.failJob(errorMessage(err));
      return;
    }
    if (this.isTerminal()) return;
    this.state = 'RUNNING';
    this.reconciled = true;
    this.logger.info({ vertices: this.graph.vertices.length }, 'job running');
    this.schedule();
  }

  /**
   * FLIP-383 recovery: replay the events, rebuild decided vertices and finished executions (with
   * their original attempts), restore the source coordinators, reconcile with the partitions the
   * TaskManagers kept, and reset what was lost. Returns false when it fell back to a restart from
   * scratch (the reason is logged and kept in the recovery report).
   */
  private async recover(events: JobEventManager): Promise<boolean> {
    this.state = 'RECONCILING';
    const startedAt = this.ctx.clock.now();
    const report: RecoveryReport = {
      epoch: this.ctx.epoch,
      elected_at_ms: this.ctx.electedAtMs,
      started_at_ms: startedAt,
      restarted_from_scratch: false,
    };
    this.logger.info('job enters RECONCILING: replaying its events');
    const replayed = new ReplayedJobState(this.jobGraph);
    const result = await events.replay((record) => replayed.apply(record));
    report.replay_ms = result.durationMs;
    report.events_replayed = result.events;
    report.torn_tail_bytes_discarded = result.report.discardedBytes;
    // The lease renewal is the better witness; the newest event is a lower bound when the lock was free.
    report.old_leader_last_heard_ms = Math.max(this.ctx.previousLeaderLastHeardMs ?? 0, replayed.lastEventAtMs);
    if (!result.ok) {
      const f = result.failure;
      const why = f.kind === 'handler' ? errorMessage(f.error) : f.error.message;
      return this.fallBackToScratch(events, report, `replaying the job events failed (${f.kind}): ${why}`);
    }
    const cut = describeReplayCut(result.report.cut);
    if (cut && result.report.cut!.expected) {
      this.logger.warn({ cut: result.report.cut }, cut);
    } else if (cut) {
      // History written after the damage is dropped and its work reruns: say so where users look.
      this.logger.error({ cut: result.report.cut }, cut);
      report.reason = cut;
      this.notes.push(`JobMaster failover: ${cut}`);
    }
    try {
      await this.applyReplay(replayed, report);
    } catch (err) {
      return this.fallBackToScratch(events, report, `applying the replayed events failed: ${errorMessage(err)}`);
    }
    this.ctx.crashPoints?.duringReconciling();
    const reconcileStart = this.ctx.clock.now();
    await this.reconcilePartitions(report);
    report.reconnect_wait_ms = this.ctx.clock.now() - reconcileStart;
    report.finished_at_ms = this.ctx.clock.now();
    await this.addRecoveryReport(report);
    this.logger.info({ report }, 'job recovered from a JobMaster failover');
    return true;
  }

  private async fallBackToScratch(events: JobEventManager, report: RecoveryReport, reason: string): Promise<false> {
    this.logger.error({ reason }, 'recovery failed; the job restarts from scratch');
    report.restarted_from_scratch = true;
    report.reason = reason;
    report.finished_at_ms = this.ctx.clock.now();
    this.notes.push(`JobMaster failover: recovery failed, restarted from scratch: ${reason}`);
    // Start over on a clean log and a fresh graph; partitions of the old run go away.
    await events.stop(true);
    await events.start();
    await this.closeCoordinators();
    this.coordinators.clear();
    this.userCoordinators.clear();
    this.sinkTemps.clear();
    this.graph = new ExecutionGraph(this.jobGraph);
    if (this.recorder) {
      this.recorder.muted = false;
      this.graph.addListener(this.recorder);
    }
    for (const tm of this.ctx.registry.all()) this.releaseJobOn(tm);
    await this.addRecoveryReport(report);
    return false;
  }

  private async addRecoveryReport(report: RecoveryReport): Promise<void> {
    this.ctx.recoveries.push(report);
    await this.ctx.saveRecoveries(this.jobId, this.ctx.recoveries).catch((err: unknown) =>
      this.logger.warn({ err: errorMessage(err) }, 'cannot store the recovery report'),
    );
  }

  private async applyReplay(replayed: ReplayedJobState, report: RecoveryReport): Promise<void> {
    let dropped = 0;
    const recorder = this.recorder;
    if (recorder) recorder.muted = true;
    try {
      for (const ejv of this.graph.vertices) {
        const init = replayed.initialized.get(ejv.id);
        if (!init) continue;
        const ranges = init.inputs.map((i) => i.subtask_ranges.map((r) => ({ start: r.start, end: r.end })));
        if (ejv.isSource) {
          const op = this.sourceOperator(ejv);
          this.coordinators.set(ejv.id, new SourceCoordinator(op.id, ejv.name, op.source, init.parallelism, this.logger));
        }
        this.graph.initializeVertex(ejv, init.parallelism, ranges, ejv.jobVertex.parallelism === 0);
        await this.createUserCoordinators(ejv, false);
      }
      dropped = this.dropFinishedNotCoveredByCoordinators(replayed);
      for (const e of replayed.finished.values()) {
        const ev = this.graph.executionVertex(e.vertex_id, e.subtask);
        if (!ev) throw new ReboundError(ErrorCode.EVENT_STORE_CORRUPT, `finished event for unknown subtask ${e.vertex_id}#${e.subtask}`);
        ev.attempt = e.attempt;
        ev.attemptEpoch = e.attempt_epoch;
        if (e.sink_temp_file) this.sinkTemps.set(ev.key, e.sink_temp_file);
        this.graph.markFinished(
          ev,
          e.location ?? { task_manager_id: '', address: '' },
          e.io_metrics ?? { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] },
          e.finished_at_ms,
        );
      }
      // Unfinished subtasks get attempt numbers no earlier attempt used.
      for (const ev of this.graph.allExecutionVertices()) {
        if (ev.state !== 'FINISHED') ev.attempt = (replayed.maxAttempt.get(ev.key) ?? -1) + 1;
      }
      report.executions_recovered = replayed.finished.size;
    } finally {
      if (recorder) recorder.muted = false;
    }

    let reset = 0;
    for (const [vertexId, coordinator] of this.coordinators) {
      const ejv = this.graph.vertex(vertexId);
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
        this.restartAllOnReset.add(vertexId);
        await coordinator.start();
      } else {
        const finished = ejv.vertices.filter((ev) => ev.state === 'FINISHED');
        this.logger.info({ vertexId, finished: finished.length }, 'source without batch snapshots was not finished: all its subtasks rerun');
        this.graph.resetForNewExecutions(finished);
        reset += finished.length;
        await coordinator.start();
        for (const ev of ejv.vertices) coordinator.setAttempt(ev.subtask, ev.attempt);
      }
    }
    for (const [vertexId, holders] of this.userCoordinators) {
      const ejv = this.graph.vertex(vertexId);
      for (const h of holders) {
        if (h.supportsBatchSnapshot()) {
          await h.resetToCheckpoint(replayed.snapshots.get(h.operatorId));
        } else {
          if (ejv.isFinished()) this.restartAllOnReset.add(vertexId);
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
    for (const [vertexId, holders] of this.userCoordinators) {
      for (const h of holders) if (h.supportsBatchSnapshot()) dropped += replayed.dropFinishedAfterSnapshot(vertexId, h.operatorId);
      const parallelism = replayed.initialized.get(vertexId)?.parallelism ?? 0;
      const unfinished = replayed.finishedOf(vertexId).length < parallelism;
      if (unfinished && holders.some((h) => !h.supportsBatchSnapshot())) dropped += replayed.dropFinishedAfterSnapshot(vertexId);
    }
    if (dropped > 0) this.logger.info({ dropped }, 'executions that finished after their coordinator snapshot run again');
    return dropped;
  }

  private sourceOperator(ejv: ExecutionJobVertex): Extract<Transformation, { kind: 'source' }> {
    const op = this.operators.get(ejv.jobVertex.source_operator_id);
    if (!op || op.kind !== 'source') {
      throw new ReboundError(ErrorCode.JOB_INVALID, `vertex '${ejv.name}': the job module has no source ${ejv.jobVertex.source_operator_id}`);
    }
    return op;
  }

  /**
   * Asks the TaskManagers for the partitions they kept, during at most
   * `execution.batch.job-recovery.previous-worker.recovery.timeout` (ended early when every
   * needed partition is back). Keeps what matches a recovered execution, releases the rest, and
   * resets the producers of needed partitions that did not come back.
   */
  private async reconcilePartitions(report: RecoveryReport): Promise<void> {
    const needed = new Map<string, ExecutionVertex>();
    const recovered = new Map<string, ExecutionVertex>();
    for (const ev of this.graph.allExecutionVertices()) {
      if (ev.state !== 'FINISHED' || ev.jobVertex.consumers.length === 0) continue;
      const key = partitionKey(ev.partitionId());
      recovered.set(key, ev);
      if (ev.jobVertex.consumers.some((c) => !c.isFinished())) needed.set(key, ev);
    }
    const timeoutMs = this.jobConfig.getDurationMs('execution.batch.job-recovery.previous-worker.recovery.timeout');
    const rec = new PartitionReconciliation(new Map([...needed].map(([key, ev]) => [key, ev.location?.task_manager_id ?? ''])));
    this.reconciliation = rec;
    for (const tm of this.ctx.registry.all()) this.askForPartitions(tm);
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
        this.ctx.registry.call(tm, (c) => c.ReleasePartitions, { epoch: this.ctx.epoch, partitions: ids }).catch((err: unknown) =>
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
      const toReset = this.withWholeSources(missing);
      this.notifyCoordinatorsOfReset(toReset);
      this.graph.resetForNewExecutions(toReset);
      this.afterSourceResets(toReset);
      report.executions_reset = (report.executions_reset ?? 0) + toReset.length;
    }
  }

  private askForPartitions(tm: RegisteredTaskManager): void {
    const rec = this.reconciliation;
    if (!rec) return;
    this.ctx.registry
      .call(tm, (c) => c.GetAndRetainPartitionsWithMetrics, { epoch: this.ctx.epoch, job_id: this.jobId })
      .then(
        (res) => {
          if (this.reconciliation === rec) rec.add(tm, res.partitions);
          // The answer came after the window closed: nothing will use these partitions.
          else this.releaseUntracked(tm, res.partitions);
        },
        (err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'asking for retained partitions failed'),
      );
  }

  /** A TaskManager registered with this leader. */
  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    if (this.reconciliation) {
      this.askForPartitions(tm);
    } else if (this.reconciled && retainedJobs.includes(this.jobId)) {
      // Too late for reconciliation: whatever it kept of this job is of no use now.
      this.ctx.registry
        .call(tm, (c) => c.GetAndRetainPartitionsWithMetrics, { epoch: this.ctx.epoch, job_id: this.jobId })
        .then(
          (res) => this.releaseUntracked(tm, res.partitions),
          (err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'asking for retained partitions failed'),
        );
    }
  }

  /**
   * Releases the given partitions of `tm` that no finished execution of the graph tracks there.
   * Never a blanket release of the job: tasks of this leader may already run on that TaskManager.
   */
  private releaseUntracked(tm: RegisteredTaskManager, partitions: readonly PartitionWithMetrics__Output[]): void {
    const ids = partitions
      .map((p) => p.partition_id!)
      .filter((id) => {
        const ev = this.graph.executionVertex(id.vertex_id, id.subtask);
        return !(ev && ev.state === 'FINISHED' && ev.attempt === id.attempt && ev.attemptEpoch === id.epoch && ev.location?.task_manager_id === tm.id);
      });
    if (ids.length === 0) return;
    this.logger.info({ taskManagerId: tm.id, partitions: ids.length }, 'releasing retained partitions reported after reconciliation');
    this.ctx.registry
      .call(tm, (c) => c.ReleasePartitions, { epoch: this.ctx.epoch, partitions: ids })
      .catch((err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing partitions failed'));
  }

  private releaseJobOn(tm: RegisteredTaskManager): void {
    this.ctx.registry
      .call(tm, (c) => c.DisconnectJob, { epoch: this.ctx.epoch, job_id: this.jobId, release_partitions: true })
      .catch((err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'releasing retained partitions failed'));
  }

  /** Adds all subtasks of sources that must rerun as a whole (no batch snapshot, recovered finished). */
  private withWholeSources(evs: ExecutionVertex[]): ExecutionVertex[] {
    const out = new Set(evs);
    for (const ev of evs) {
      if (!this.restartAllOnReset.has(ev.jobVertex.id)) continue;
      for (const other of ev.jobVertex.vertices) {
        if (other.state === 'FINISHED' || other.state === 'CREATED') out.add(other);
      }
    }
    return [...out];
  }

  /** After a whole-vertex reset, the vertex's enumerator and user coordinators start over. */
  private afterSourceResets(evs: readonly ExecutionVertex[]): void {
    const vertices = new Set(evs.map((ev) => ev.jobVertex.id));
    for (const id of vertices) {
      if (!this.restartAllOnReset.has(id)) continue;
      this.restartAllOnReset.delete(id);
      const ejv = this.graph.vertex(id);
      for (const h of this.userCoordinators.get(id) ?? []) {
        this.logger.info({ vertexId: id, operatorId: h.operatorId }, 'coordinator without batch snapshots starts over with all its subtasks');
        void h.resetToCheckpoint(undefined).catch((err: unknown) => void this.failJob(errorMessage(err)));
      }
      const coordinator = this.coordinators.get(id);
      if (!coordinator) continue;
      this.logger.info({ vertexId: id }, 'source without batch snapshots restarts all its subtasks with a fresh enumerator');
      void coordinator
        .restore(undefined, new Map(), new Map(ejv.vertices.map((ev) => [ev.subtask, ev.attempt])))
        .catch((err: unknown) => void this.failJob(errorMessage(err)));
    }
  }

  private async initializeSourceVertex(ejv: ExecutionJobVertex): Promise<void> {
    const op = this.sourceOperator(ejv);
    const configured = this.jobConfig.getInt('execution.batch.adaptive.auto-parallelism.default-source-parallelism');
    let splits: number | undefined;
    try {
      splits = op.source.estimateSplits?.();
    } catch (err) {
      throw new ReboundError(ErrorCode.USER_CODE, `source '${ejv.name}': estimating its splits failed: ${errorMessage(err)}`);
    }
    const max = ejv.jobVertex.max_parallelism || this.maxParallelism;
    const parallelism = ejv.jobVertex.parallelism || configured || Math.max(1, Math.min(max, splits ?? 1));
    const coordinator = new SourceCoordinator(op.id, ejv.name, op.source, parallelism, this.logger);
    await coordinator.start();
    this.coordinators.set(ejv.id, coordinator);
    this.graph.initializeVertex(ejv, parallelism, [], ejv.jobVertex.parallelism === 0);
    await this.createUserCoordinators(ejv);
  }

  /** Initializes a non-source vertex once all its producers finished. */
  private initializeVertex(ejv: ExecutionJobVertex): void {
    const n = this.graph.numSubpartitionsFor(ejv.producers[0]!, this.maxParallelism);
    const bytes = new Array<number>(n).fill(0);
    for (const producer of ejv.producers) {
      for (const pv of producer.vertices) {
        const sp = pv.ioMetrics?.subpartition_bytes ?? [];
        for (let i = 0; i < n; i++) bytes[i]! += sp[i] ?? 0;
      }
    }
    const broadcastOnly = ejv.jobVertex.inputs.every((e) => e.distribution === 'BROADCAST');
    const fixed = ejv.jobVertex.parallelism;
    let parallelism: number;
    let ranges: SubpartitionRange[];
    if (broadcastOnly) {
      parallelism = fixed || 1;
      ranges = Array.from({ length: parallelism }, () => ({ start: 0, end: 0 }));
    } else {
      const decided = decideParallelismAndInputs(
        bytes,
        {
          minParallelism: this.jobConfig.getInt('execution.batch.adaptive.auto-parallelism.min-parallelism'),
          maxParallelism: ejv.jobVertex.max_parallelism || this.maxParallelism,
          avgDataVolumePerTask: this.jobConfig.getBytes('execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task'),
        },
        fixed,
      );
      parallelism = decided.parallelism;
      ranges = decided.ranges;
    }
    this.graph.initializeVertex(
      ejv,
      parallelism,
      ejv.jobVertex.inputs.map(() => ranges),
      fixed === 0,
    );
    this.logger.info(
      { vertexId: ejv.id, vertexName: ejv.name, parallelism, adaptive: fixed === 0, inputBytes: bytes.reduce((a, b) => a + b, 0) },
      'vertex initialized',
    );
    // Its tasks may be deployed before the coordinators started: requests wait for the start.
    this.createUserCoordinators(ejv).catch((err: unknown) => void this.failJob(errorMessage(err)));
  }

  /** The `process` operators of a vertex that have a coordinator. */
  private coordinatedOperators(ejv: ExecutionJobVertex): Extract<Transformation, { kind: 'process' }>[] {
    const out: Extract<Transformation, { kind: 'process' }>[] = [];
    for (const id of ejv.jobVertex.operator_ids) {
      const op = this.operators.get(id);
      if (op?.kind === 'process' && op.coordinator) out.push(op);
    }
    return out;
  }

  /** Creates and starts the user coordinators of a vertex that was just initialized. */
  private async createUserCoordinators(ejv: ExecutionJobVertex, started = true): Promise<void> {
    const holders = this.coordinatedOperators(ejv).map(
      (op) => new OperatorCoordinatorHolder(ejv.id, op.id, op.name, op.coordinator!, ejv.parallelism, this.logger),
    );
    if (holders.length === 0) return;
    this.userCoordinators.set(ejv.id, holders);
    if (started) await Promise.all(holders.map((h) => h.start()));
  }

  /** Runs a call into user coordinator code; a failure fails the job (its state is now unknown). */
  private userCoordinatorCall(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      void this.failJob(errorMessage(err));
    }
  }

  private notifyCoordinatorsOfReset(evs: readonly ExecutionVertex[]): void {
    for (const ev of evs) {
      this.coordinators.get(ev.jobVertex.id)?.subtaskReset(ev.subtask, ev.attempt + 1);
      for (const h of this.userCoordinators.get(ev.jobVertex.id) ?? []) this.userCoordinatorCall(() => h.subtaskReset(ev.subtask, ev.attempt + 1));
    }
  }

  private async closeCoordinators(): Promise<void> {
    for (const c of this.coordinators.values()) await c.close();
    for (const hs of this.userCoordinators.values()) for (const h of hs) await h.close();
  }

  /** The scheduler's one loop: initialize what can be, deploy what is ready, finish the job. */
  schedule(): void {
    if (this.state !== 'RUNNING') return;
    try {
      this.scheduleNow();
    } catch (err) {
      // schedule() runs inside RPC handlers (a TaskManager registering, a task finishing): an
      // error escaping it would fail those calls over and over while the job never moves.
      this.logger.error({ err: errorMessage(err) }, 'scheduling failed');
      void this.failJob(`scheduling failed: ${errorMessage(err)}`);
    }
  }

  private scheduleNow(): void {
    const now = this.ctx.clock.now();
    let nextRestartAt = Infinity;
    for (const ejv of this.graph.vertices) {
      if (!ejv.isInitialized) {
        if (ejv.producers.every((p) => p.isFinished())) this.initializeVertex(ejv);
        else continue;
      }
      for (const ev of ejv.vertices) {
        if (ev.state !== 'CREATED') continue;
        if (!ejv.producers.every((p) => p.isFinished())) continue;
        const delay = this.restartDelays.get(ev.key);
        if (delay && delay.notBeforeMs > now) {
          nextRestartAt = Math.min(nextRestartAt, delay.notBeforeMs);
          continue;
        }
        const tm = this.ctx.registry.allocateSlot();
        if (!tm) return;
        this.restartDelays.delete(ev.key);
        this.deploy(ev, tm);
      }
    }
    if (nextRestartAt !== Infinity) this.scheduleLater(nextRestartAt - now);
    if (this.graph.isFinished()) void this.finishJob();
  }

  private scheduleLater(ms: number): void {
    if (this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.schedule();
    }, Math.max(0, ms));
  }

  private deploy(ev: ExecutionVertex, tm: RegisteredTaskManager): void {
    const ejv = ev.jobVertex;
    this.graph.transition(ev, 'DEPLOYING');
    ev.attemptEpoch = this.ctx.epoch;
    ev.location = { task_manager_id: tm.id, address: tm.address };
    const tdd = this.deploymentDescriptor(ev);
    // The answer may come after this attempt was canceled or replaced: act on this attempt only.
    const id = this.attemptIdOf(ev);
    this.ctx.registry.call(tm, (c) => c.DeployTask, tdd).then(
      () => {
        this.ctx.crashPoints?.afterDeploy();
        if (ev.state === 'DEPLOYING' && ev.location?.task_manager_id === tm.id) this.graph.transition(ev, 'RUNNING');
      },
      (err: unknown) => {
        const re = err as ReboundError;
        this.logger.warn({ vertexId: ejv.id, subtask: ev.subtask, attempt: ev.attempt, taskManagerId: tm.id, err: errorMessage(err) }, 'deployment failed');
        if (re.code === ErrorCode.SLOT_UNAVAILABLE && ev.state === 'DEPLOYING' && ev.attempt === id.attempt && ev.location?.task_manager_id === tm.id) {
          // Our slot accounting ran ahead of the TaskManager's; not a failure of the task. The
          // slot we took was never used: give it back, or the TaskManager looks full for good.
          this.ctx.registry.freeSlot(tm.id);
          this.graph.transition(ev, 'CREATED');
          ev.location = undefined;
          this.restartDelays.set(ev.key, { notBeforeMs: this.ctx.clock.now() + this.restartDelayMs });
          this.schedule();
          return;
        }
        this.failExecution(id, `deployment to ${tm.id} failed: ${errorMessage(err)}`);
      },
    );
  }

  private attemptIdOf(ev: ExecutionVertex): ExecutionAttemptId__Output {
    return { job_id: this.jobId, vertex_id: ev.jobVertex.id, subtask: ev.subtask, attempt: ev.attempt };
  }

  private deploymentDescriptor(ev: ExecutionVertex): TaskDeploymentDescriptor {
    const ejv = ev.jobVertex;
    const jv = ejv.jobVertex;
    const inputs = jv.inputs.map((edge, i) => {
      const producer = this.graph.vertex(edge.source_vertex_id);
      const range = ejv.inputRanges[i]?.[ev.subtask] ?? { start: ev.subtask, end: ev.subtask };
      return {
        input_index: i,
        producer_vertex_id: producer.id,
        distribution: edge.distribution,
        subpartition_start: range.start,
        subpartition_end: range.end,
        partitions: producer.vertices.map((pv) => ({ partition_id: pv.partitionId(), location: pv.location })),
      };
    });
    const consumer = ejv.consumers[0];
    const outEdge = consumer?.jobVertex.inputs.find((e) => e.source_vertex_id === ejv.id);
    let sinkTemp = '';
    if (jv.sink) {
      sinkTemp = sinkTempFile(jv.sink.path, this.jobId, ejv.id, ev.subtask, ev.attempt, this.ctx.epoch);
      this.sinkTemps.set(ev.key, sinkTemp);
    }
    return {
      epoch: this.ctx.epoch,
      execution: this.attemptIdOf(ev),
      vertex_name: ejv.name,
      parallelism: ejv.parallelism,
      operator_ids: jv.operator_ids,
      source_operator_id: jv.source_operator_id,
      sink: jv.sink,
      inputs,
      output: outEdge
        ? {
            num_subpartitions: this.graph.numSubpartitionsFor(ejv, this.maxParallelism),
            distribution: outEdge.distribution,
            key_selector_id: outEdge.key_selector_id,
            combiner_id: outEdge.combiner_id,
          }
        : null,
      module_digest: this.jobGraph.module_digest,
      job_args: this.jobGraph.job_args,
      config: { ...this.ctx.config.toRecord(), ...this.jobGraph.config },
      sink_temp_file: sinkTemp,
      jobmaster_address: this.ctx.address,
      working_directory: this.jobGraph.working_directory,
    };
  }

  /** Finds the execution vertex whose *current* attempt is `id`; stale attempts are ignored. */
  private currentAttempt(id: ExecutionAttemptId__Output | null): ExecutionVertex | undefined {
    if (!id) return undefined;
    const ev = this.graph.executionVertex(id.vertex_id, id.subtask);
    return ev && ev.attempt === id.attempt ? ev : undefined;
  }

  onTaskExecutionState(update: TaskExecutionState__Output): void {
    const ev = this.currentAttempt(update.execution);
    if (!ev || update.epoch !== this.ctx.epoch) {
      this.logger.debug({ execution: update.execution, epoch: update.epoch }, 'ignoring an update of a stale attempt');
      return;
    }
    if (ev.state !== 'DEPLOYING' && ev.state !== 'RUNNING') return;
    switch (update.state) {
      case 'RUNNING':
        this.graph.transition(ev, 'RUNNING');
        return;
      case 'FINISHED':
        this.onExecutionFinished(ev, update.task_manager_id, update.io_metrics);
        return;
      case 'FAILED':
      case 'CANCELED': {
        const missing = update.error_code === ErrorCode.PARTITION_NOT_FOUND ? update.missing_partition : null;
        this.failExecution(update.execution!, update.error_message || update.state, missing ?? undefined);
        return;
      }
      default:
        return;
    }
  }

  private onExecutionFinished(ev: ExecutionVertex, tmId: string, metrics: IOMetrics__Output | null): void {
    const location = ev.location ?? { task_manager_id: tmId, address: this.ctx.registry.get(tmId)?.address ?? '' };
    this.ctx.registry.freeSlot(location.task_manager_id);
    this.coordinators.get(ev.jobVertex.id)?.subtaskFinished(ev.subtask, ev.attempt);
    for (const h of this.userCoordinators.get(ev.jobVertex.id) ?? []) this.userCoordinatorCall(() => h.subtaskFinished(ev.subtask, ev.attempt));
    this.graph.markFinished(ev, location, metrics ?? { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] }, this.ctx.clock.now());
    if (ev.jobVertex.isFinished()) {
      this.logger.info({ vertexId: ev.jobVertex.id, vertexName: ev.jobVertex.name }, 'vertex finished');
    }
    this.ctx.onSlotsFreed();
    this.schedule();
  }

  /**
   * A task attempt failed. Restart it (and, for a lost partition, its producer), bounded by the
   * restart strategy.
   */
  failExecution(id: ExecutionAttemptId__Output, reason: string, missingPartition?: ResultPartitionId__Output): void {
    const ev = this.currentAttempt(id);
    if (!ev || this.state !== 'RUNNING') return;
    if (ev.state !== 'DEPLOYING' && ev.state !== 'RUNNING' && ev.state !== 'SCHEDULED') return;
    if (ev.location) this.ctx.registry.freeSlot(ev.location.task_manager_id);
    this.graph.transition(ev, 'FAILED');
    this.logger.warn({ execution: attemptKey(id), reason }, 'task failed');
    const toReset: ExecutionVertex[] = [ev];
    if (missingPartition) {
      const producer = this.graph.executionVertex(missingPartition.vertex_id, missingPartition.subtask);
      const sameAttempt = producer !== undefined && producer.attempt === missingPartition.attempt && producer.attemptEpoch === missingPartition.epoch;
      if (sameAttempt && producer.state === 'FINISHED') {
        this.logger.warn({ partition: partitionKey({ ...missingPartition, job_id: this.jobId }) }, 'partition lost; its producer reruns');
        toReset.push(producer);
      }
    }
    this.restartTasks(toReset, reason);
  }

  /** A TaskManager is gone: its running tasks failed, and finished partitions on it are lost. */
  onTaskManagerLost(tmId: string, reason: string): void {
    if (this.state !== 'RUNNING') return;
    const toReset: ExecutionVertex[] = [];
    for (const ev of this.graph.allExecutionVertices()) {
      if (ev.location?.task_manager_id !== tmId) continue;
      if (ev.state === 'DEPLOYING' || ev.state === 'RUNNING') {
        this.graph.transition(ev, 'FAILED');
        toReset.push(ev);
      } else if (ev.state === 'FINISHED' && ev.jobVertex.consumers.some((c) => !c.isFinished())) {
        toReset.push(ev);
      }
    }
    if (toReset.length > 0) this.restartTasks(toReset, `TaskManager ${tmId} lost: ${reason}`);
  }

  private restartTasks(failed: ExecutionVertex[], reason: string): void {
    const evs = this.withWholeSources(failed);
    for (const ev of evs) {
      if (ev.state === 'RUNNING' || ev.state === 'DEPLOYING') this.cancelAttempt(ev);
    }
    // Counts restarts that happened: a job that exhausted N attempts shows N, not N + 1.
    if (this.restarts >= this.maxRestarts) {
      void this.failJob(`restart strategy exhausted after ${this.maxRestarts} restarts; last failure: ${reason}`);
      return;
    }
    this.restarts++;
    const notBefore = this.ctx.clock.now() + this.restartDelayMs;
    this.notifyCoordinatorsOfReset(evs);
    this.graph.resetForNewExecutions(evs);
    this.afterSourceResets(evs);
    for (const ev of evs) this.restartDelays.set(ev.key, { notBeforeMs: notBefore });
    this.logger.info({ tasks: evs.map((e) => e.key), restarts: this.restarts }, 'restarting tasks');
    this.ctx.onSlotsFreed();
    this.schedule();
  }

  requestSplit(req: SplitRequest__Output): SplitResponse {
    if (req.epoch !== this.ctx.epoch || this.state !== 'RUNNING') {
      throw new ReboundError(ErrorCode.STALE_EPOCH, `split request of epoch ${req.epoch} to a JobMaster of epoch ${this.ctx.epoch}`);
    }
    const ev = this.currentAttempt(req.execution);
    const coordinator = req.execution ? this.coordinators.get(req.execution.vertex_id) : undefined;
    if (!ev || !coordinator) {
      throw new ReboundError(ErrorCode.ILLEGAL_STATE, `no running source attempt ${req.execution ? attemptKey(req.execution) : '?'}`);
    }
    let answer;
    try {
      answer = coordinator.requestSplit(ev.subtask, ev.attempt);
    } catch (err) {
      if (err instanceof ReboundError && err.code === ErrorCode.USER_CODE) {
        void this.failJob(err.message);
      }
      throw err;
    }
    if ('split' in answer) return { split_json: JSON.stringify(answer.split), no_more_splits: false, retry_after_ms: 0 };
    if ('noMoreSplits' in answer) return { split_json: '', no_more_splits: true, retry_after_ms: 0 };
    return { split_json: '', no_more_splits: false, retry_after_ms: answer.retryAfterMs };
  }

  /** A task's request to a user coordinator of its vertex. */
  async handleCoordinationRequest(req: CoordinationRequest__Output): Promise<CoordinationResponse> {
    if (req.epoch !== this.ctx.epoch || this.state !== 'RUNNING') {
      throw new ReboundError(ErrorCode.STALE_EPOCH, `coordination request of epoch ${req.epoch} to a JobMaster of epoch ${this.ctx.epoch}`);
    }
    const ev = this.currentAttempt(req.execution);
    if (!ev) throw new ReboundError(ErrorCode.ILLEGAL_STATE, `no running attempt ${req.execution ? attemptKey(req.execution) : '?'}`);
    const holder = this.userCoordinators.get(ev.jobVertex.id)?.find((h) => h.operatorId === req.operator_id);
    if (!holder) {
      throw new ReboundError(ErrorCode.ILLEGAL_STATE, `operator ${req.operator_id} of vertex '${ev.jobVertex.name}' has no coordinator (pass { coordinator } to process())`);
    }
    try {
      return { response_json: await holder.handleRequest(ev.subtask, ev.attempt, req.request_json) };
    } catch (err) {
      if (err instanceof ReboundError && err.code === ErrorCode.USER_CODE) void this.failJob(err.message);
      throw err;
    }
  }

  private async finishJob(): Promise<void> {
    if (this.state !== 'RUNNING' || this.committing) return;
    // FINISHED is reported only once the output is committed: a client that sees FINISHED
    // (e.g. `rebound submit` without --detached) must find the output in place.
    this.committing = true;
    try {
      const manifest = this.commitManifest();
      await this.ctx.saveCommitManifest(this.jobId, manifest);
      await applyCommit(manifest);
      this.state = 'FINISHED';
    } catch (err) {
      this.state = 'FAILED';
      this.failure = `committing the sinks failed: ${errorMessage(err)}`;
      this.logger.error({ err: errorMessage(err) }, 'commit failed');
    }
    this.finishedAtMs = this.ctx.clock.now();
    this.logger.info({ state: this.state }, 'job terminal');
    await this.reportTerminal();
  }

  private commitManifest(): CommitManifest {
    const entries: CommitManifest['entries'] = [];
    const dirs = new Set<string>();
    for (const ejv of this.graph.vertices) {
      const sink = ejv.jobVertex.sink;
      if (!sink) continue;
      dirs.add(sink.path);
      for (const ev of ejv.vertices) {
        const temp = this.sinkTemps.get(ev.key);
        if (!temp) throw new ReboundError(ErrorCode.INTERNAL, `no output recorded for sink subtask ${ev.key}`);
        entries.push({ temp, final: sinkFinalFile(sink.path, ev.subtask) });
      }
    }
    return { jobId: this.jobId, entries, directories: [...dirs] };
  }

  async failJob(reason: string): Promise<void> {
    // A commit in progress decides the outcome itself.
    if (this.isTerminal() || this.committing) return;
    this.logger.error({ reason }, 'job failed');
    this.failure = reason;
    this.state = 'FAILED';
    await this.cancelRunningTasks();
    this.finishedAtMs = this.ctx.clock.now();
    await this.reportTerminal();
  }

  async cancel(): Promise<void> {
    if (this.isTerminal() || this.committing) return;
    this.state = 'CANCELLING';
    await this.cancelRunningTasks();
    this.state = 'CANCELED';
    this.finishedAtMs = this.ctx.clock.now();
    await this.reportTerminal();
  }

  /** Cancels one running attempt (its result is no longer wanted). */
  private cancelAttempt(ev: ExecutionVertex): void {
    const tm = ev.location ? this.ctx.registry.get(ev.location.task_manager_id) : undefined;
    const id = this.attemptIdOf(ev);
    this.graph.transition(ev, 'CANCELED');
    if (!tm) return;
    this.ctx.registry.freeSlot(tm.id);
    this.ctx.registry.call(tm, (c) => c.CancelTask, { epoch: this.ctx.epoch, execution: id }).catch((err: unknown) => {
      this.logger.warn({ err: errorMessage(err), taskManagerId: tm.id }, 'cancel failed');
    });
  }

  private async cancelRunningTasks(): Promise<void> {
    const calls: Promise<unknown>[] = [];
    for (const ev of this.graph.allExecutionVertices()) {
      if ((ev.state === 'DEPLOYING' || ev.state === 'RUNNING') && ev.location) {
        const tm = this.ctx.registry.get(ev.location.task_manager_id);
        this.graph.transition(ev, 'CANCELED');
        if (!tm) continue;
        this.ctx.registry.freeSlot(tm.id);
        calls.push(
          this.ctx.registry.call(tm, (c) => c.CancelTask, { epoch: this.ctx.epoch, execution: this.attemptIdOf(ev) }).catch((err: unknown) => {
            this.logger.warn({ err: errorMessage(err), taskManagerId: tm.id }, 'cancel failed');
          }),
        );
      }
    }
    await Promise.all(calls);
  }

  private async reportTerminal(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    await this.closeCoordinators();
    // Globally terminal: nothing will ever be recovered, so the log goes.
    await this.ctx.events?.stop(true).catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'clearing the job events failed'));
    if (this.terminalReported) return;
    this.terminalReported = true;
    await this.ctx.onTerminal(this);
    this.ctx.onSlotsFreed();
  }

  /** Stops without touching the cluster: leadership was lost, the next leader takes over. */
  async suspend(): Promise<void> {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
    this.state = this.isTerminal() ? this.state : 'CREATED';
    await this.closeCoordinators();
    await this.ctx.events?.stop(false).catch(() => undefined);
  }

  status(): JobStatus {
    return {
      job_id: this.jobId,
      name: this.name,
      state: this.state === 'FAILING' ? 'RUNNING' : this.state,
      vertices: this.graph.vertices.map((ejv) => this.vertexStatus(ejv)),
      submitted_at_ms: this.jobGraph.submitted_at_ms,
      finished_at_ms: this.finishedAtMs,
      failure: this.failure,
      restarts: this.restarts,
      leader_epoch: this.ctx.epoch,
      recoveries: this.ctx.recoveries,
      notes: this.notes,
    };
  }

  private vertexStatus(ejv: ExecutionJobVertex): VertexStatus {
    const c = ejv.countByState();
    let state: string;
    if (!ejv.isInitialized) state = 'CREATED';
    else if (ejv.isFinished()) state = 'FINISHED';
    // A failed or canceled job runs nothing any more, whatever its finished subtasks say.
    else if (this.state === 'FAILED' || this.state === 'CANCELED') state = c.FAILED > 0 ? 'FAILED' : 'CANCELED';
    else if (c.RUNNING + c.DEPLOYING > 0 || c.FINISHED > 0) state = 'RUNNING';
    else state = 'SCHEDULED';
    let bytesIn = 0;
    let bytesOut = 0;
    let recordsIn = 0;
    let recordsOut = 0;
    // What a consumer reads is what its producers wrote into its subpartition ranges.
    ejv.jobVertex.inputs.forEach((edge, i) => {
      const ranges = ejv.inputRanges[i] ?? [];
      for (const pv of this.graph.vertex(edge.source_vertex_id).vertices) {
        const sp = pv.ioMetrics?.subpartition_bytes ?? [];
        ejv.vertices.forEach((ev) => {
          if (ev.state !== 'FINISHED') return;
          const r = ranges[ev.subtask];
          if (r) for (let k = r.start; k <= r.end; k++) bytesIn += sp[k] ?? 0;
        });
      }
    });
    for (const ev of ejv.vertices) {
      bytesIn += ev.ioMetrics?.bytes_in ?? 0;
      bytesOut += ev.ioMetrics?.bytes_out ?? 0;
      recordsIn += ev.ioMetrics?.records_in ?? 0;
      recordsOut += ev.ioMetrics?.records_out ?? 0;
    }
    return {
      id: ejv.id,
      name: ejv.name,
      parallelism: ejv.parallelism,
      max_parallelism: ejv.jobVertex.max_parallelism || this.maxParallelism,
      state,
      tasks: {
        created: c.CREATED,
        scheduled: c.SCHEDULED,
        deploying: c.DEPLOYING,
        running: c.RUNNING,
        finished: c.FINISHED,
        failed: c.FAILED,
        canceled: c.CANCELED,
      },
      parallelism_decided_adaptively: ejv.decidedAdaptively,
      bytes_consumed: bytesIn,
      bytes_produced: bytesOut,
      records_in: recordsIn,
      records_out: recordsOut,
    };
  }
}
