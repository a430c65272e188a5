import { ErrorCode, ReboundError, attemptKey, errorMessage, partitionKey } from '@rebound/core';
import type {
  Clock,
  Configuration,
  ExecutionAttemptId__Output,
  IOMetrics__Output,
  JobGraph__Output,
  JobStatus,
  Logger,
  SplitRequest__Output,
  SplitResponse,
  TaskDeploymentDescriptor,
  TaskExecutionState__Output,
  VertexStatus,
} from '@rebound/core';
import type { Transformation } from '@rebound/api';
import {
  ExecutionGraph,
  TERMINAL_JOB_STATES,
  type ExecutionJobVertex,
  type ExecutionVertex,
  type JobState,
} from './execution-graph.js';
import { decideParallelismAndInputs, type SubpartitionRange } from './parallelism-decider.js';
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
  readonly graph: ExecutionGraph;
  state: JobState = 'CREATED';
  failure = '';
  restarts = 0;
  finishedAtMs = 0;
  readonly notes: string[] = [];
  private readonly coordinators = new Map<string, SourceCoordinator>();
  private readonly restartDelays = new Map<string, PendingRestart>();
  private readonly sinkTemps = new Map<string, string>();
  private readonly logger: Logger;
  private readonly maxRestarts: number;
  private readonly restartDelayMs: number;
  private readonly maxParallelism: number;
  private readonly jobConfig: Configuration;
  private restartTimer: NodeJS.Timeout | undefined;
  private terminalReported = false;

  constructor(
    readonly jobGraph: JobGraph__Output,
    private readonly operators: ReadonlyMap<string, Transformation>,
    private readonly ctx: JobMasterContext,
  ) {
    this.graph = new ExecutionGraph(jobGraph);
    this.logger = ctx.logger.child({ component: 'JobMaster', jobId: jobGraph.job_id });
    this.jobConfig = ctx.config.with(jobGraph.config);
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

  async start(): Promise<void> {
    try {
      for (const ejv of this.graph.vertices) {
        if (ejv.isSource) await this.initializeSourceVertex(ejv);
      }
    } catch (err) {
      await this.failJob(errorMessage(err));
      return;
    }
    this.state = 'RUNNING';
    this.logger.info({ vertices: this.graph.vertices.length }, 'job running');
    this.schedule();
  }

  private async initializeSourceVertex(ejv: ExecutionJobVertex): Promise<void> {
    const op = this.operators.get(ejv.jobVertex.source_operator_id);
    if (!op || op.kind !== 'source') {
      throw new ReboundError(ErrorCode.JOB_INVALID, `vertex '${ejv.name}': the job module has no source ${ejv.jobVertex.source_operator_id}`);
    }
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
  }

  /** The scheduler's one loop: initialize what can be, deploy what is ready, finish the job. */
  schedule(): void {
    if (this.state !== 'RUNNING') return;
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
    ev.location = { task_manager_id: tm.id, address: tm.address };
    ev.deployedEpoch = this.ctx.epoch;
    const tdd = this.deploymentDescriptor(ev);
    this.ctx.registry.call(tm, (c) => c.DeployTask, tdd).then(
      () => {
        if (ev.state === 'DEPLOYING' && ev.location?.task_manager_id === tm.id) this.graph.transition(ev, 'RUNNING');
      },
      (err: unknown) => {
        const re = err as ReboundError;
        this.logger.warn({ vertexId: ejv.id, subtask: ev.subtask, attempt: ev.attempt, taskManagerId: tm.id, err: errorMessage(err) }, 'deployment failed');
        if (re.code === ErrorCode.SLOT_UNAVAILABLE && ev.state === 'DEPLOYING') {
          // Our slot accounting ran ahead of the TaskManager's; not a failure of the task.
          this.graph.transition(ev, 'CREATED');
          ev.location = undefined;
          this.restartDelays.set(ev.key, { notBeforeMs: this.ctx.clock.now() + this.restartDelayMs });
          this.schedule();
          return;
        }
        this.failExecution(this.attemptIdOf(ev), `deployment to ${tm.id} failed: ${errorMessage(err)}`);
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
  failExecution(id: ExecutionAttemptId__Output, reason: string, missingPartition?: { vertex_id: string; subtask: number; attempt: number }): void {
    const ev = this.currentAttempt(id);
    if (!ev || this.state !== 'RUNNING') return;
    if (ev.state !== 'DEPLOYING' && ev.state !== 'RUNNING' && ev.state !== 'SCHEDULED') return;
    if (ev.location) this.ctx.registry.freeSlot(ev.location.task_manager_id);
    this.graph.transition(ev, 'FAILED');
    this.logger.warn({ execution: attemptKey(id), reason }, 'task failed');
    const toReset: ExecutionVertex[] = [ev];
    if (missingPartition) {
      const producer = this.graph.executionVertex(missingPartition.vertex_id, missingPartition.subtask);
      if (producer && producer.attempt === missingPartition.attempt && producer.state === 'FINISHED') {
        this.logger.warn({ partition: partitionKey({ job_id: this.jobId, ...missingPartition }) }, 'partition lost; its producer reruns');
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

  private restartTasks(evs: ExecutionVertex[], reason: string): void {
    this.restarts++;
    if (this.restarts > this.maxRestarts) {
      void this.failJob(`restart strategy exhausted after ${this.maxRestarts} restarts; last failure: ${reason}`);
      return;
    }
    const notBefore = this.ctx.clock.now() + this.restartDelayMs;
    for (const ev of evs) {
      this.coordinators.get(ev.jobVertex.id)?.subtaskReset(ev.subtask, ev.attempt + 1);
    }
    this.graph.resetForNewExecutions(evs);
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

  private async finishJob(): Promise<void> {
    if (this.state !== 'RUNNING') return;
    this.state = 'FINISHED';
    try {
      const manifest = this.commitManifest();
      await this.ctx.saveCommitManifest(this.jobId, manifest);
      await applyCommit(manifest);
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
    if (this.isTerminal()) return;
    this.logger.error({ reason }, 'job failed');
    this.failure = reason;
    this.state = 'FAILED';
    await this.cancelRunningTasks();
    this.finishedAtMs = this.ctx.clock.now();
    await this.reportTerminal();
  }

  async cancel(): Promise<void> {
    if (this.isTerminal()) return;
    this.state = 'CANCELLING';
    await this.cancelRunningTasks();
    this.state = 'CANCELED';
    this.finishedAtMs = this.ctx.clock.now();
    await this.reportTerminal();
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
    for (const c of this.coordinators.values()) await c.close();
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
    for (const c of this.coordinators.values()) await c.close();
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
      recoveries: [],
      notes: this.notes,
    };
  }

  private vertexStatus(ejv: ExecutionJobVertex): VertexStatus {
    const c = ejv.countByState();
    let state: string;
    if (!ejv.isInitialized) state = 'CREATED';
    else if (ejv.isFinished()) state = 'FINISHED';
    else if (c.RUNNING + c.DEPLOYING > 0 || c.FINISHED > 0) state = 'RUNNING';
    else state = 'SCHEDULED';
    let bytesIn = 0;
    let bytesOut = 0;
    let recordsIn = 0;
    let recordsOut = 0;
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
