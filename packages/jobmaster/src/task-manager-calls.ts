import {
  ErrorCode,
  ReboundError,
  attemptKey,
  type JobState,
  IllegalStateError,
  UnavailableError,
  StaleEpochError,
} from '@rebound/core';
import type {
  CoordinationRequest__Output,
  CoordinationResponse,
  ExecutionAttemptId__Output,
  IOMetrics__Output,
  Logger,
  ResultPartitionId__Output,
  SplitRequest__Output,
  SplitResponse,
  TaskExecutionState__Output,
} from '@rebound/core';
import type { ExecutionGraph, ExecutionVertex } from './execution-graph.js';
import type { JobMasterLeaderContext } from './job-master-context.js';
import type { OperatorCoordinators } from './operator-coordinators.js';
import type { ShuffleMaster } from './shuffle/shuffle-master.js';

/**
 * A TaskManager's report or request as the JobMaster sees it: the caller's session was checked
 * by the leader (LeaderServices) before it got here.
 */
export type TaskExecutionUpdate = Omit<
  TaskExecutionState__Output,
  'session_id' | 'deploy_epoch' | 'unreachable_shuffle_workers'
> &
  DeployEpoch & { readonly unreachable_shuffle_workers?: readonly string[] };
export type TaskSplitRequest = Omit<SplitRequest__Output, 'session_id' | 'task_manager_id' | 'deploy_epoch'> &
  DeployEpoch;
export type TaskCoordinationRequest = Omit<
  CoordinationRequest__Output,
  'session_id' | 'task_manager_id' | 'deploy_epoch'
> &
  DeployEpoch;
/** Epoch of the leader that deployed the attempt; absent or 0: the leader called. */
interface DeployEpoch {
  readonly deploy_epoch?: number;
}

/** The job as its tasks' calls see it: the JobMaster owns its state and decides its end. */
export interface CalledJob {
  /** The current graph: a restart from scratch replaces it. */
  readonly graph: ExecutionGraph;
  readonly state: JobState;
  failJob(reason: string): Promise<void>;
  failExecution(id: ExecutionAttemptId__Output, reason: string, missingPartition?: ResultPartitionId__Output): void;
  /** The execution vertex whose *current* attempt is `id`, deployed by the leader of `deployEpoch`. */
  currentAttempt(id: ExecutionAttemptId__Output | null, deployEpoch?: number): ExecutionVertex | undefined;
  schedule(): void;
}

/** What TaskManagerCalls works with. */
export interface TaskManagerCallsContext extends Pick<
  JobMasterLeaderContext,
  'epoch' | 'registry' | 'clock' | 'onSlotsFreed'
> {
  readonly job: CalledJob;
  readonly coordinators: OperatorCoordinators;
  readonly shuffleMaster: Pick<ShuffleMaster, 'excludeWorkers'>;
  readonly logger: Logger;
}

/**
 * The calls of the job's tasks, from the TaskManagers that run them: state updates, split
 * requests and coordination requests, each checked to come from a current attempt of this
 * leader's epoch, then routed to the graph, failover or the operator coordinators.
 */
export class TaskManagerCalls {
  constructor(private readonly ctx: TaskManagerCallsContext) {}

  private get graph(): ExecutionGraph {
    return this.ctx.job.graph;
  }

  /**
   * While RECONCILING, the kept tasks this leader adopts may already report to it (they answer to
   * it from the moment they told it about themselves); they are asked to retry until it knows them.
   */
  private refuseWhileReconciling(what: string): void {
    if (this.ctx.job.state === 'RECONCILING')
      throw new UnavailableError(`${what}: the job is reconciling after a JobMaster failover; retry`);
  }

  onTaskExecutionState(update: TaskExecutionUpdate): void {
    this.refuseWhileReconciling('task update');
    const ev = this.ctx.job.currentAttempt(update.execution, update.deploy_epoch);
    if (!ev || update.epoch !== this.ctx.epoch) {
      this.ctx.logger.debug(
        { execution: update.execution, epoch: update.epoch },
        'ignoring an update of a stale attempt',
      );
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
        const unreachable = update.unreachable_shuffle_workers ?? [];
        if (update.state === 'FAILED' && unreachable.length > 0)
          this.ctx.shuffleMaster.excludeWorkers(unreachable, update.error_message);
        const missing = update.error_code === ErrorCode.PARTITION_NOT_FOUND ? update.missing_partition : null;
        this.ctx.job.failExecution(update.execution!, update.error_message || update.state, missing ?? undefined);
        return;
      }
      default:
        return;
    }
  }

  private onExecutionFinished(ev: ExecutionVertex, tmId: string, metrics: IOMetrics__Output | null): void {
    const location = ev.location ?? { task_manager_id: tmId, address: this.ctx.registry.get(tmId)?.address ?? '' };
    this.ctx.registry.freeSlot(location.task_manager_id);
    this.ctx.coordinators.subtaskFinished(ev);
    this.graph.markFinished(
      ev,
      location,
      metrics ?? { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] },
      this.ctx.clock.now(),
    );
    if (ev.jobVertex.isFinished()) {
      this.ctx.logger.info({ vertexId: ev.jobVertex.id, vertexName: ev.jobVertex.name }, 'vertex finished');
    }
    this.ctx.onSlotsFreed();
    this.ctx.job.schedule();
  }

  async requestSplit(req: TaskSplitRequest): Promise<SplitResponse> {
    // An adopted reader may ask before reconciliation is over: nothing for it yet.
    if (req.epoch === this.ctx.epoch && this.ctx.job.state === 'RECONCILING')
      return { split_json: '', no_more_splits: false, retry_after_ms: 100 };
    if (req.epoch !== this.ctx.epoch || this.ctx.job.state !== 'RUNNING') {
      throw new StaleEpochError(
        req.epoch,
        this.ctx.epoch,
        `split request of epoch ${req.epoch} to a JobMaster of epoch ${this.ctx.epoch}`,
      );
    }
    const ev = this.ctx.job.currentAttempt(req.execution, req.deploy_epoch);
    const coordinator = req.execution ? this.ctx.coordinators.source(req.execution.vertex_id) : undefined;
    if (!ev || !coordinator) {
      throw new IllegalStateError(`no running source attempt ${req.execution ? attemptKey(req.execution) : '?'}`);
    }
    let answer;
    try {
      // In the job's user-code worker: this thread serves other calls meanwhile.
      answer = await coordinator.requestSplit(ev.subtask, ev.attempt);
    } catch (err) {
      if (err instanceof ReboundError && err.code === ErrorCode.USER_CODE) {
        void this.ctx.job.failJob(err.message);
      }
      throw err;
    }
    if ('split' in answer)
      return { split_json: JSON.stringify(answer.split), no_more_splits: false, retry_after_ms: 0 };
    if ('noMoreSplits' in answer) return { split_json: '', no_more_splits: true, retry_after_ms: 0 };
    return { split_json: '', no_more_splits: false, retry_after_ms: answer.retryAfterMs };
  }

  /** A task's request to a user coordinator of its vertex. */
  async handleCoordinationRequest(req: TaskCoordinationRequest): Promise<CoordinationResponse> {
    if (req.epoch === this.ctx.epoch) this.refuseWhileReconciling('coordination request');
    if (req.epoch !== this.ctx.epoch || this.ctx.job.state !== 'RUNNING') {
      throw new StaleEpochError(
        req.epoch,
        this.ctx.epoch,
        `coordination request of epoch ${req.epoch} to a JobMaster of epoch ${this.ctx.epoch}`,
      );
    }
    const ev = this.ctx.job.currentAttempt(req.execution, req.deploy_epoch);
    if (!ev) throw new IllegalStateError(`no running attempt ${req.execution ? attemptKey(req.execution) : '?'}`);
    const holder = this.ctx.coordinators.userOf(ev.jobVertex.id).find((h) => h.operatorId === req.operator_id);
    if (!holder) {
      throw new IllegalStateError(
        `operator ${req.operator_id} of vertex '${ev.jobVertex.name}' has no coordinator (pass { coordinator } to process())`,
      );
    }
    try {
      return { response_json: await holder.handleRequest(ev.subtask, ev.attempt, req.request_json) };
    } catch (err) {
      if (err instanceof ReboundError && err.code === ErrorCode.USER_CODE) void this.ctx.job.failJob(err.message);
      throw err;
    }
  }
}
