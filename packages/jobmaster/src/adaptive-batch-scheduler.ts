import { ErrorCode, ReboundError, errorMessage } from '@rebound/core';
import type { Configuration, ExecutionAttemptId__Output, JobGraph__Output, Logger, TaskDeploymentDescriptor } from '@rebound/core';
import type { JobState } from '@rebound/core';
import type { ExecutionGraph, ExecutionJobVertex, ExecutionVertex } from './execution-graph.js';
import type { JobMasterContext } from './job-master.js';
import type { OperatorCoordinators } from './operator-coordinators.js';
import { decideVertexParallelismAndInputs } from './parallelism-decider.js';
import type { FixedDelayRestartBackoffTimeStrategy } from './restart-strategy.js';
import { sinkTempFile } from './sink-committer.js';
import type { TaskExecutorGateway } from './task-executor-gateway.js';
import type { RegisteredTaskManager } from './task-manager-registry.js';

/** What the scheduler needs from the JobMaster it schedules for. */
export interface SchedulingContext {
  readonly graph: ExecutionGraph;
  readonly state: JobState;
  failJob(reason: string): Promise<void>;
  failExecution(id: ExecutionAttemptId__Output, reason: string): void;
  /** Every vertex finished: commit the sinks. */
  finishJob(): Promise<void>;
}

interface PendingRestart {
  readonly notBeforeMs: number;
}

/** A source with at least this many splits per slot gets one subtask per slot (issue 13). */
export const SPLITS_PER_SLOT_TO_CAP = 4;

export function attemptIdOf(ev: ExecutionVertex): ExecutionAttemptId__Output {
  return { job_id: ev.jobVertex.graph.jobId, vertex_id: ev.jobVertex.id, subtask: ev.subtask, attempt: ev.attempt };
}

/**
 * The AdaptiveBatchScheduler's decisions: when a vertex is initialized and with which
 * parallelism (decided from the bytes its producers wrote), when a subtask is deployed and where.
 */
export class AdaptiveBatchScheduler {
  private readonly restartDelays = new Map<string, PendingRestart>();
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly maxParallelism: number;

  constructor(
    private readonly host: SchedulingContext,
    private readonly jobGraph: JobGraph__Output,
    private readonly ctx: JobMasterContext,
    private readonly gateway: TaskExecutorGateway,
    private readonly jobConfig: Configuration,
    private readonly coordinators: OperatorCoordinators,
    private readonly sinkTemps: Map<string, string>,
    private readonly restartStrategy: FixedDelayRestartBackoffTimeStrategy,
    private readonly logger: Logger,
  ) {
    this.maxParallelism = jobConfig.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism');
  }

  private get graph(): ExecutionGraph {
    return this.host.graph;
  }

  async initializeSourceVertex(ejv: ExecutionJobVertex): Promise<void> {
    const op = this.coordinators.sourceOperator(ejv);
    const configured = this.jobConfig.getInt('execution.batch.adaptive.auto-parallelism.default-source-parallelism');
    let splits: number | undefined;
    try {
      splits = op.source.estimateSplits?.();
    } catch (err) {
      throw new ReboundError(ErrorCode.USER_CODE, `source '${ejv.name}': estimating its splits failed: ${errorMessage(err)}`);
    }
    const max = ejv.jobVertex.max_parallelism || this.maxParallelism;
    // One subtask per split, except where the splits outnumber the slots SPLITS_PER_SLOT_TO_CAP
    // times or more: then one subtask per slot. Subtasks pull splits until none are left, so waves
    // of subtasks only add tasks, combiners and partitions (each with its own copy of every key)
    // that run one after the other anyway; with few splits per slot, one subtask per split keeps
    // reruns small at little cost.
    const slots = this.totalSlots();
    const perSplit = Math.max(1, Math.min(max, splits ?? 1));
    const parallelism = ejv.jobVertex.parallelism || configured || (slots > 0 && perSplit >= SPLITS_PER_SLOT_TO_CAP * slots ? slots : perSplit);
    const coordinator = this.coordinators.createSource(ejv, parallelism);
    await coordinator.start();
    this.graph.initializeVertex(ejv, parallelism, [], ejv.jobVertex.parallelism === 0);
    // The slots are those registered at this moment: a job started while TaskManagers are still
    // registering gets fewer source subtasks; the log says which.
    this.logger.info({ vertexId: ejv.id, vertexName: ejv.name, parallelism, splits, slots, configured }, 'source vertex initialized');
    await this.coordinators.createUserCoordinators(ejv);
  }

  /** Slots of the registered TaskManagers, busy or not (0 while none has registered). */
  private totalSlots(): number {
    return this.ctx.registry.all().reduce((n, tm) => n + tm.slots, 0);
  }

  /** Initializes a non-source vertex once all its producers finished. */
  private initializeVertex(ejv: ExecutionJobVertex): void {
    const fixed = ejv.jobVertex.parallelism;
    const { parallelism, ranges, inputBytes } = decideVertexParallelismAndInputs(
      ejv,
      this.graph.numSubpartitionsFor(ejv.producers[0]!, this.maxParallelism),
      this.jobConfig,
      this.totalSlots(),
    );
    this.graph.initializeVertex(
      ejv,
      parallelism,
      ejv.jobVertex.inputs.map(() => ranges),
      fixed === 0,
    );
    this.logger.info(
      { vertexId: ejv.id, vertexName: ejv.name, parallelism, adaptive: fixed === 0, inputBytes },
      'vertex initialized',
    );
    // Its tasks may be deployed before the coordinators started: requests wait for the start.
    this.coordinators.createUserCoordinators(ejv).catch((err: unknown) => void this.host.failJob(errorMessage(err)));
  }

  /** The scheduler's one loop: initialize what can be, deploy what is ready, finish the job. */
  schedule(): void {
    if (this.host.state !== 'RUNNING') return;
    try {
      this.scheduleNow();
    } catch (err) {
      // schedule() runs inside RPC handlers (a TaskManager registering, a task finishing): an
      // error escaping it would fail those calls over and over while the job never moves.
      this.logger.error({ err: errorMessage(err) }, 'scheduling failed');
      void this.host.failJob(`scheduling failed: ${errorMessage(err)}`);
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
    if (this.graph.isFinished()) void this.host.finishJob();
  }

  /** The restarted executions `evs` are deployed no earlier than `notBeforeMs`. */
  delayRestart(evs: readonly ExecutionVertex[], notBeforeMs: number): void {
    for (const ev of evs) this.restartDelays.set(ev.key, { notBeforeMs });
  }

  private scheduleLater(ms: number): void {
    if (this.restartTimer) return;
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      this.schedule();
    }, Math.max(0, ms));
  }

  /** Stops the pending restart timer (the job ended or this leader stops). */
  close(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private deploy(ev: ExecutionVertex, tm: RegisteredTaskManager): void {
    const ejv = ev.jobVertex;
    this.graph.transition(ev, 'DEPLOYING');
    ev.attemptEpoch = this.ctx.epoch;
    ev.location = { task_manager_id: tm.id, address: tm.address };
    const tdd = this.deploymentDescriptor(ev);
    // The answer may come after this attempt was canceled or replaced: act on this attempt only.
    const id = attemptIdOf(ev);
    this.gateway.deployTask(tm, tdd).then(
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
          this.restartDelays.set(ev.key, { notBeforeMs: this.ctx.clock.now() + this.restartStrategy.delayMs });
          this.schedule();
          return;
        }
        this.host.failExecution(id, `deployment to ${tm.id} failed: ${errorMessage(err)}`);
      },
    );
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
      sinkTemp = sinkTempFile(jv.sink.path, this.jobGraph.job_id, ejv.id, ev.subtask, ev.attempt, this.ctx.epoch);
      this.sinkTemps.set(ev.key, sinkTemp);
    }
    return {
      epoch: this.ctx.epoch,
      execution: attemptIdOf(ev),
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
      partition_read_capability: this.ctx.partitionReadCapability ?? '',
    };
  }
}
