import { ErrorCode, ReboundError, errorMessage } from '@rebound/core';
import type {
  ExecutionAttemptId__Output,
  ResultPartitionId__Output,
  ShuffleWorkerLocation__Output,
  TaskDeploymentDescriptor,
  TaskManagerLocation__Output,
} from '@rebound/core';
import type { ExecutionGraph, ExecutionJobVertex, ExecutionVertex } from './execution-graph.js';
import { decideVertexParallelismAndInputs } from './parallelism-decider.js';
import type { SchedulingContext } from './scheduling-context.js';
import { sinkTempFile } from './sink-committer.js';
import type { RegisteredTaskManager } from './task-manager-registry.js';

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
  /** Vertices initialized here whose decision is not durable yet: their tasks wait for it. */
  private readonly notDurable = new Set<string>();
  private restartTimer: NodeJS.Timeout | undefined;
  private readonly maxParallelism: number;

  constructor(private readonly ctx: SchedulingContext) {
    this.maxParallelism = ctx.jobConfig.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism');
  }

  private get graph(): ExecutionGraph {
    return this.ctx.job.graph;
  }

  async initializeSourceVertex(ejv: ExecutionJobVertex): Promise<void> {
    const configured = this.ctx.jobConfig.getInt(
      'execution.batch.adaptive.auto-parallelism.default-source-parallelism',
    );
    const splits = this.ctx.coordinators.estimateSplits(ejv);
    const max = ejv.jobVertex.max_parallelism || this.maxParallelism;
    // One subtask per split, except where the splits outnumber the slots SPLITS_PER_SLOT_TO_CAP
    // times or more: then one subtask per slot. Subtasks pull splits until none are left, so waves
    // of subtasks only add tasks, combiners and partitions (each with its own copy of every key)
    // that run one after the other anyway; with few splits per slot, one subtask per split keeps
    // reruns small at little cost.
    const slots = this.totalSlots();
    const perSplit = Math.max(1, Math.min(max, splits ?? 1));
    const parallelism =
      ejv.jobVertex.parallelism ||
      configured ||
      (slots > 0 && perSplit >= SPLITS_PER_SLOT_TO_CAP * slots ? slots : perSplit);
    const coordinator = this.ctx.coordinators.createSource(ejv, parallelism);
    await coordinator.start();
    this.graph.initializeVertex(ejv, parallelism, [], ejv.jobVertex.parallelism === 0);
    // The slots are those registered at this moment: a job started while TaskManagers are still
    // registering gets fewer source subtasks; the log says which.
    this.ctx.logger.info(
      { vertexId: ejv.id, vertexName: ejv.name, parallelism, splits, slots, configured },
      'source vertex initialized',
    );
    await this.ctx.coordinators.createUserCoordinators(ejv);
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
      this.ctx.jobConfig,
      this.totalSlots(),
    );
    this.graph.initializeVertex(
      ejv,
      parallelism,
      ejv.jobVertex.inputs.map(() => ranges),
      fixed === 0,
    );
    this.ctx.logger.info(
      { vertexId: ejv.id, vertexName: ejv.name, parallelism, adaptive: fixed === 0, inputBytes },
      'vertex initialized',
    );
    // Its tasks may be deployed before the coordinators started: requests wait for the start.
    this.ctx.coordinators
      .createUserCoordinators(ejv)
      .catch((err: unknown) => void this.ctx.job.failJob(errorMessage(err)));
  }

  /** The scheduler's one loop: initialize what can be, deploy what is ready, finish the job. */
  schedule(): void {
    if (this.ctx.job.state !== 'RUNNING') return;
    try {
      this.scheduleNow();
    } catch (err) {
      // schedule() runs inside RPC handlers (a TaskManager registering, a task finishing): an
      // error escaping it would fail those calls over and over while the job never moves.
      this.ctx.logger.error({ err: errorMessage(err) }, 'scheduling failed');
      void this.ctx.job.failJob(`scheduling failed: ${errorMessage(err)}`);
    }
  }

  private scheduleNow(): void {
    const now = this.ctx.clock.now();
    let nextRestartAt = Infinity;
    for (const ejv of this.graph.vertices) {
      if (!ejv.isInitialized) {
        if (!ejv.producers.every((p) => p.isFinished())) continue;
        this.initializeVertex(ejv);
        this.deployOnceDurable(ejv);
      }
      if (this.notDurable.has(ejv.id)) continue;
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
    if (this.graph.isFinished()) void this.ctx.job.finishJob();
  }

  /**
   * Holds the vertex's deployments until its initialization is durable: a task that outlives
   * this leader (keep-running-tasks) is adopted by the next one only if the log has its vertex.
   */
  private deployOnceDurable(ejv: ExecutionJobVertex): void {
    const durable = this.ctx.job.vertexDecisionsDurable();
    if (!durable) return;
    this.notDurable.add(ejv.id);
    void durable
      .catch(() => undefined)
      .then(() => {
        this.notDurable.delete(ejv.id);
        this.schedule();
      });
  }

  /** The restarted executions `evs` are deployed no earlier than `notBeforeMs`. */
  delayRestart(evs: readonly ExecutionVertex[], notBeforeMs: number): void {
    for (const ev of evs) this.restartDelays.set(ev.key, { notBeforeMs });
  }

  private scheduleLater(ms: number): void {
    if (this.restartTimer) return;
    this.restartTimer = setTimeout(
      () => {
        this.restartTimer = undefined;
        this.schedule();
      },
      Math.max(0, ms),
    );
  }

  /** Stops the pending restart timer (the job ended or this leader stops). */
  close(): void {
    if (this.restartTimer) clearTimeout(this.restartTimer);
    this.restartTimer = undefined;
  }

  private deploy(ev: ExecutionVertex, tm: RegisteredTaskManager): void {
    const ejv = ev.jobVertex;
    let shuffleWorkers: ShuffleWorkerLocation__Output[] = [];
    try {
      if (ejv.consumers.length > 0) {
        shuffleWorkers = this.ctx.shuffleMaster.registerPartitionWithProducer(
          ejv.graph.jobId,
          { ...ev.partitionId(), epoch: this.ctx.epoch },
          { task_manager_id: tm.id, address: tm.address },
        );
      }
    } catch (err) {
      if ((err as ReboundError).code !== ErrorCode.UNAVAILABLE) throw err;
      // No shuffle worker to write to (none registered yet, or every one is gone): not a failure
      // of the task. It stays CREATED and is deployed when a worker registers.
      this.ctx.registry.freeSlot(tm.id);
      this.ctx.logger.warn({ vertexId: ejv.id, subtask: ev.subtask, err: errorMessage(err) }, 'deployment deferred');
      return;
    }
    this.graph.transition(ev, 'DEPLOYING');
    ev.attemptEpoch = this.ctx.epoch;
    ev.location = { task_manager_id: tm.id, address: tm.address };
    if (ejv.jobVertex.sink) {
      ev.sinkTempFile = sinkTempFile(
        ejv.jobVertex.sink.path,
        ejv.graph.jobId,
        ejv.id,
        ev.subtask,
        ev.attempt,
        this.ctx.epoch,
      );
    }
    const tdd = this.deploymentDescriptor(ev, shuffleWorkers);
    // The answer may come after this attempt was canceled or replaced: act on this attempt only.
    const id = attemptIdOf(ev);
    this.ctx.gateway.deployTask(tm, tdd).then(
      () => {
        this.ctx.crashPoints?.afterDeploy();
        if (ev.state === 'DEPLOYING' && ev.location?.task_manager_id === tm.id) this.graph.transition(ev, 'RUNNING');
      },
      (err: unknown) => {
        const re = err as ReboundError;
        this.ctx.logger.warn(
          { vertexId: ejv.id, subtask: ev.subtask, attempt: ev.attempt, taskManagerId: tm.id, err: errorMessage(err) },
          'deployment failed',
        );
        if (
          (re.code === ErrorCode.SLOT_UNAVAILABLE || re.code === ErrorCode.EPOCH_UNCONFIRMED) &&
          ev.state === 'DEPLOYING' &&
          ev.attempt === id.attempt &&
          ev.location?.task_manager_id === tm.id
        ) {
          // Not a failure of the task: our slot accounting ran ahead of the TaskManager's, or it
          // cannot confirm our epoch yet (its HA store read failed: right after an etcd outage the
          // client refuses calls for a while, and counting those as task failures used up the
          // restart budget in a burst). The slot we took was never used: give it back, or the
          // TaskManager looks full for good.
          this.ctx.registry.freeSlot(tm.id);
          this.graph.transition(ev, 'CREATED');
          ev.location = undefined;
          this.restartDelays.set(ev.key, { notBeforeMs: this.ctx.clock.now() + this.ctx.restartDelayMs });
          this.schedule();
          return;
        }
        this.ctx.job.failExecution(id, `deployment to ${tm.id} failed: ${errorMessage(err)}`);
      },
    );
  }

  /** Where a finished producer's partition is read from, when shuffle workers keep it. */
  private shuffleWorkersOf(
    partition: ResultPartitionId__Output,
    producer: TaskManagerLocation__Output,
  ): ShuffleWorkerLocation__Output[] {
    return this.ctx.shuffleMaster
      .holdersOf(this.graph.jobId, partition, producer)
      .filter((h) => h.kind === 'shuffle-worker')
      .map((h) => ({ worker_id: h.id, address: h.address }));
  }

  private deploymentDescriptor(
    ev: ExecutionVertex,
    shuffleWorkers: ShuffleWorkerLocation__Output[],
  ): TaskDeploymentDescriptor {
    const jobGraph = this.ctx.job.jobGraph;
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
        partitions: producer.vertices.map((pv) => ({
          partition_id: pv.partitionId(),
          location: pv.location,
          shuffle_workers: pv.location ? this.shuffleWorkersOf(pv.partitionId(), pv.location) : [],
        })),
      };
    });
    const consumer = ejv.consumers[0];
    const outEdge = consumer?.jobVertex.inputs.find((e) => e.source_vertex_id === ejv.id);
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
            shuffle_workers: shuffleWorkers,
          }
        : null,
      module_digest: jobGraph.module_digest,
      job_args: jobGraph.job_args,
      config: this.ctx.jobConfig.toRecord(),
      sink_temp_file: ev.sinkTempFile,
      jobmaster_address: this.ctx.address,
      working_directory: jobGraph.working_directory,
      partition_read_capability: this.ctx.partitionReadCapability ?? '',
    };
  }
}
