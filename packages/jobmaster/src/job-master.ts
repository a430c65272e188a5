import { TERMINAL_JOB_STATES, errorMessage, type JobState, isNotLeader } from '@rebound/core';
import type {
  Configuration,
  CoordinationResponse,
  ExecutionAttemptId__Output,
  JobGraph__Output,
  JobStatus,
  Logger,
  ResultPartitionId__Output,
  SplitResponse,
} from '@rebound/core';
import { AdaptiveBatchScheduler } from './adaptive-batch-scheduler.js';
import { ExecutionGraph, type ExecutionVertex } from './execution-graph.js';
import { Failover } from './failover.js';
import { ExceptionHistory } from './exception-history.js';
import type { JobMasterContext } from './job-master-context.js';
import { buildJobStatus } from './job-status.js';
import { OperatorCoordinators } from './operator-coordinators.js';
import type { BatchJobRecoveryHandler } from './recovery/batch-job-recovery-handler.js';
import { DefaultBatchJobRecoveryHandler } from './recovery/default-batch-job-recovery-handler.js';
import { DummyBatchJobRecoveryHandler } from './recovery/dummy-batch-job-recovery-handler.js';
import { FixedDelayRestartBackoffTimeStrategy } from './restart-strategy.js';
import { checkCollectLimits } from './collect-result.js';
import { applyCommit, commitManifestOf } from './sink-committer.js';
import type { ShuffleMaster } from './shuffle/shuffle-master.js';
import { TaskManagerShuffleMaster } from './shuffle/task-manager-shuffle-master.js';
import { RpcTaskExecutorGateway } from './task-executor-gateway.js';
import {
  TaskManagerCalls,
  type TaskCoordinationRequest,
  type TaskExecutionUpdate,
  type TaskSplitRequest,
} from './task-manager-calls.js';
import type { RegisteredTaskManager } from './task-manager-registry.js';
import type { JobUserCode } from './user-code/job-user-code.js';

/**
 * Runs one job. The parts: the AdaptiveBatchScheduler (when a vertex is initialized, with which
 * parallelism; when a subtask is deployed), Failover with its restart strategy, the
 * OperatorCoordinators, and the BatchJobRecoveryHandler (FLIP-383). The JobMaster owns the job's
 * state, routes the TaskManagers' reports to its parts (TaskManagerCalls), and commits the sinks at
 * the end.
 */
export class JobMaster {
  graph: ExecutionGraph;
  state: JobState = 'CREATED';
  /**
   * RECONCILING, but the graph does not hold the replayed progress yet: every count in it is 0.
   * The status says CREATED meanwhile, as before the job was restored, so that no view shows
   * progress going back to nothing for the few milliseconds a replay takes.
   */
  private replaying = false;
  failure = '';
  finishedAtMs = 0;
  readonly notes: string[] = [];
  readonly coordinators: OperatorCoordinators;
  private readonly logger: Logger;
  private readonly jobConfig: Configuration;
  private readonly restartStrategy: FixedDelayRestartBackoffTimeStrategy;
  /** Task failures, newest first: Flink's `/jobs/:id/exceptions` history. */
  readonly exceptionHistory: ExceptionHistory;
  private readonly scheduler: AdaptiveBatchScheduler;
  private readonly failover: Failover;
  private readonly taskManagerCalls: TaskManagerCalls;
  private readonly recovery: BatchJobRecoveryHandler;
  private readonly shuffleMaster: ShuffleMaster;
  private terminalReported = false;
  /** Every task finished and the sinks are being committed: the job can no longer fail or be canceled. */
  private committing = false;

  constructor(
    readonly jobGraph: JobGraph__Output,
    /** The job's user code on the JobMaster; closed with the job. */
    private readonly userCode: JobUserCode,
    private readonly ctx: JobMasterContext<JobMaster>,
  ) {
    this.graph = new ExecutionGraph(jobGraph);
    this.logger = ctx.logger.child({ component: 'JobMaster', jobId: jobGraph.job_id });
    this.jobConfig = ctx.config.with(jobGraph.config);
    this.coordinators = new OperatorCoordinators({
      userCode,
      logger: this.logger,
      maxHeldResponses: this.jobConfig.getInt('execution.batch.job-recovery.max-held-coordinator-responses'),
      onFailure: (reason) => void this.failJob(reason),
    });
    userCode.onFailure((reason) => void this.failJob(reason));
    this.restartStrategy = FixedDelayRestartBackoffTimeStrategy.fromConfig(this.jobConfig);
    const { epoch, registry, clock, crashPoints } = ctx;
    const gateway = ctx.gateway ?? new RpcTaskExecutorGateway(registry);
    const shuffleMaster = ctx.shuffleMaster ?? new TaskManagerShuffleMaster({ epoch, gateway });
    this.shuffleMaster = shuffleMaster;
    const { coordinators, jobConfig, logger, restartStrategy } = this;
    this.scheduler = new AdaptiveBatchScheduler({
      job: this,
      jobConfig,
      coordinators,
      restartDelayMs: restartStrategy.delayMs,
      epoch,
      address: ctx.address,
      partitionReadCapability: ctx.partitionReadCapability,
      registry,
      gateway,
      shuffleMaster,
      clock,
      logger,
      crashPoints,
    });
    this.exceptionHistory = new ExceptionHistory(jobConfig.getInt('web.exception-history-size'));
    this.failover = new Failover({
      job: this,
      coordinators,
      scheduler: this.scheduler,
      restartStrategy,
      exceptionHistory: this.exceptionHistory,
      epoch,
      registry,
      gateway,
      clock,
      logger,
      onSlotsFreed: () => ctx.onSlotsFreed(),
    });
    this.taskManagerCalls = new TaskManagerCalls({
      job: this,
      coordinators,
      shuffleMaster,
      epoch,
      registry,
      clock,
      logger,
      onSlotsFreed: () => ctx.onSlotsFreed(),
    });
    this.recovery = ctx.events
      ? new DefaultBatchJobRecoveryHandler({
          job: this,
          events: ctx.events,
          jobConfig,
          coordinators,
          epoch,
          registry,
          gateway,
          shuffleMaster,
          clock,
          logger,
          crashPoints,
          electedAtMs: ctx.electedAtMs,
          previousLeaderLastHeardMs: ctx.previousLeaderLastHeardMs,
          taskManagerDirectory: ctx.taskManagerDirectory,
          recoveries: ctx.recoveries,
          saveRecoveries: (jobId, reports) => ctx.saveRecoveries(jobId, reports),
        })
      : new DummyBatchJobRecoveryHandler({ job: this, epoch, gateway, logger });
    shuffleMaster.registerJob({
      jobId: jobGraph.job_id,
      jobConfig,
      partitionsReported: (reports, from) => this.recovery.onPartitionsReported(reports, from),
      partitionsLost: (partitions, reason) => this.failover.onPartitionsLost(partitions, reason),
    });
  }

  get jobId(): string {
    return this.jobGraph.job_id;
  }
  get name(): string {
    return this.jobGraph.name;
  }
  get restarts(): number {
    return this.restartStrategy.restarts;
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
      if (await this.recovery.initialize(takeover)) {
        this.state = 'RECONCILING';
        this.replaying = true;
        try {
          await this.recovery.startRecovering();
        } finally {
          this.replaying = false;
        }
      }
      // Also after a recovery: a replay that kept no initialization of a source (its events
      // were cut off as a torn tail) must start that source afresh, as a new job would.
      for (const ejv of this.graph.vertices) {
        if (ejv.isSource && !ejv.isInitialized) await this.scheduler.initializeSourceVertex(ejv);
      }
      // Before any source task runs (see vertexDecisionsDurable).
      await this.recovery.vertexDecisionsDurable();
    } catch (err) {
      await this.failJob(errorMessage(err));
      return;
    }
    if (this.isTerminal()) return;
    this.state = 'RUNNING';
    this.recovery.onJobRunning();
    this.logger.info({ vertices: this.graph.vertices.length }, 'job running');
    this.schedule();
  }

  /** Recovery could not use the log: the job starts over on a fresh graph. */
  async restartFromScratch(): Promise<void> {
    await this.coordinators.clear();
    this.graph = new ExecutionGraph(this.jobGraph);
  }

  addNote(note: string): void {
    this.notes.push(note);
  }

  replayApplied(): void {
    this.replaying = false;
  }

  /** A TaskManager registered with this leader. */
  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    this.recovery.onTaskManagerRegistered(tm, retainedJobs);
  }

  /** The scheduler's one loop: initialize what can be, deploy what is ready, finish the job. */
  schedule(): void {
    this.scheduler.schedule();
  }

  /**
   * Finds the execution vertex whose *current* attempt is `id` (deployed by the leader of
   * `deployEpoch`, when given: attempt numbers repeat across leaders); stale attempts are ignored.
   */
  currentAttempt(id: ExecutionAttemptId__Output | null, deployEpoch = 0): ExecutionVertex | undefined {
    if (!id) return undefined;
    const ev = this.graph.executionVertex(id.vertex_id, id.subtask);
    if (!ev || ev.attempt !== id.attempt) return undefined;
    return deployEpoch === 0 || ev.attemptEpoch === 0 || ev.attemptEpoch === deployEpoch ? ev : undefined;
  }

  onTaskExecutionState(update: TaskExecutionUpdate): void {
    this.taskManagerCalls.onTaskExecutionState(update);
  }

  /**
   * A task attempt failed. Restart it (and, for a lost partition, its producer), bounded by the
   * restart strategy.
   */
  failExecution(id: ExecutionAttemptId__Output, reason: string, missingPartition?: ResultPartitionId__Output): void {
    this.failover.failExecution(id, reason, missingPartition);
  }

  /** A TaskManager is gone: its running tasks failed, and finished partitions on it are lost. */
  /** `partitionsKept`: the same TaskManager process registered again, still holding this job's partitions. */
  onTaskManagerLost(tmId: string, reason: string, partitionsKept = false): void {
    this.failover.onTaskManagerLost(tmId, reason, partitionsKept || this.shuffleMaster.partitionsOutliveTaskManagers);
  }

  requestSplit(req: TaskSplitRequest): Promise<SplitResponse> {
    return this.taskManagerCalls.requestSplit(req);
  }

  /** A task's request to a user coordinator of its vertex. */
  handleCoordinationRequest(req: TaskCoordinationRequest): Promise<CoordinationResponse> {
    return this.taskManagerCalls.handleCoordinationRequest(req);
  }

  vertexDecisionsDurable(): Promise<void> | undefined {
    return this.recovery.vertexDecisionsDurable();
  }

  async finishJob(): Promise<void> {
    if (this.state !== 'RUNNING' || this.committing) return;
    // FINISHED is reported only once the output is committed: a client that sees FINISHED
    // (e.g. `rebound submit` without --detached) must find the output in place.
    this.committing = true;
    try {
      await checkCollectLimits(this.graph, this.jobConfig);
      const manifest = commitManifestOf(this.graph);
      await this.ctx.saveCommitManifest(this.jobId, manifest);
      await applyCommit(manifest);
      this.state = 'FINISHED';
    } catch (err) {
      if (isNotLeader(err)) {
        // Not a failure of the job: its manifest is either stored, and the next leader applies
        // it, or not, and the next leader finds the job done and commits it again.
        this.logger.warn(
          { err: errorMessage(err) },
          'leadership ended during the commit; the next leader completes it',
        );
        return;
      }
      this.state = 'FAILED';
      this.failure = `committing the sinks failed: ${errorMessage(err)}`;
      this.logger.error({ err: errorMessage(err) }, 'commit failed');
    }
    this.finishedAtMs = this.ctx.clock.now();
    this.logger.info({ state: this.state }, 'job terminal');
    await this.reportTerminal();
  }

  async failJob(reason: string): Promise<void> {
    // A commit in progress decides the outcome itself.
    if (this.isTerminal() || this.committing) return;
    this.logger.error({ reason }, 'job failed');
    this.failure = reason;
    this.state = 'FAILED';
    await this.failover.cancelRunningTasks();
    this.finishedAtMs = this.ctx.clock.now();
    await this.reportTerminal();
  }

  async cancel(): Promise<void> {
    if (this.isTerminal() || this.committing) return;
    this.state = 'CANCELLING';
    await this.failover.cancelRunningTasks();
    this.state = 'CANCELED';
    this.finishedAtMs = this.ctx.clock.now();
    await this.reportTerminal();
  }

  private async reportTerminal(): Promise<void> {
    this.scheduler.close();
    this.shuffleMaster.unregisterJob(this.jobId);
    await this.coordinators.close();
    // Globally terminal: nothing will ever be recovered, so the log goes.
    await this.recovery
      .stop(true)
      .catch((err: unknown) => this.logger.warn({ err: errorMessage(err) }, 'clearing the job events failed'));
    if (!this.terminalReported) {
      this.terminalReported = true;
      await this.ctx.onTerminal(this);
      this.ctx.onSlotsFreed();
    }
    // After the terminal status is stored: ending the worker must not widen the time in which
    // the job reads as ended but its status.json is not written yet.
    await this.userCode.close();
  }

  /** Stops without touching the cluster: leadership was lost, the next leader takes over. */
  async suspend(): Promise<void> {
    this.scheduler.close();
    this.shuffleMaster.unregisterJob(this.jobId);
    this.state = this.isTerminal() ? this.state : 'CREATED';
    await this.coordinators.close();
    await this.userCode.close();
    await this.recovery.stop(false).catch(() => undefined);
  }

  status(): JobStatus {
    return buildJobStatus({
      jobId: this.jobId,
      name: this.name,
      state: this.replaying ? 'CREATED' : this.state,
      graph: this.graph,
      submittedAtMs: this.jobGraph.submitted_at_ms,
      finishedAtMs: this.finishedAtMs,
      failure: this.failure,
      restarts: this.restarts,
      leaderEpoch: this.ctx.epoch,
      recoveries: this.ctx.recoveries,
      notes: this.notes,
      jobRecoveryDisabled: this.ctx.events ? '' : (this.ctx.jobRecoveryDisabled ?? 'no job event log'),
      shuffleType: this.shuffleMaster.type,
      maxParallelism: this.jobConfig.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism'),
    });
  }
}
