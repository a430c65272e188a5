import { ClusterSecurity, Configuration, ErrorCode, PermissionDeniedError, ReboundError, attemptKey, errorMessage, handleUnary, sameSecret } from '@rebound/core';
import type { Clock, Logger, TaskDeploymentDescriptor__Output, TaskExecutorGatewayHandlers } from '@rebound/core';
import type { EpochFence } from '@rebound/ha';
import type { JobLeaderService } from './job-leader-service.js';
import type { ModuleCache } from './module-cache.js';
import { PartitionClientPool, type PartitionStore } from './partition/index.js';
import type { ReadCapabilities } from './read-capabilities.js';
import { InputPartitionNotFoundError, runTask } from './task.js';

interface RunningTask {
  readonly tdd: TaskDeploymentDescriptor__Output;
  readonly controller: AbortController;
  readonly epoch: number;
  /** Set when the JobMaster asked for the cancel (reported as CANCELED, not FAILED). */
  canceledByJobMaster: boolean;
}

/**
 * Flink's TaskExecutor: slots, the task lifecycle, and what happens to a job's partitions when
 * its JobMaster goes away. Every JobMaster→TaskManager call is fenced by the leader epoch.
 */
export class TaskExecutor {
  private readonly tasks = new Map<string, RunningTask>();
  /** Jobs whose partitions we keep for a future leader, with the timer that releases them. */
  private readonly retention = new Map<string, NodeJS.Timeout>();
  /** Whether each job (as last deployed) has batch job recovery enabled. */
  private readonly recoveryEnabled = new Map<string, boolean>();
  private jobLeader: JobLeaderService | undefined;

  constructor(
    readonly id: string,
    private readonly slots: number,
    private readonly store: PartitionStore,
    private readonly modules: ModuleCache,
    private readonly config: Configuration,
    private readonly logger: Logger,
    private readonly clock: Clock,
    /** Confirms newer epochs with the HA service's leader record before it believes them. */
    private readonly fence: EpochFence,
    /** This process's session secret: only leaders this TaskManager registered with know it. */
    private readonly session: string,
    /** The read capability of each job that ran here (checked by the PartitionService). */
    private readonly readCapabilities: ReadCapabilities,
  ) {
    const security = ClusterSecurity.of(config);
    this.clients = new PartitionClientPool({ credentials: security.channelCredentials(), channelOptions: security.channelOptions() });
  }

  private readonly clients: PartitionClientPool;

  attach(jobLeader: JobLeaderService): void {
    this.jobLeader = jobLeader;
  }

  runningAttempts(): { job_id: string; vertex_id: string; subtask: number; attempt: number }[] {
    return [...this.tasks.values()].map((t) => t.tdd.execution!);
  }

  /** Slots of this TaskManager and how many run a task (metrics). */
  slotUsage(): { total: number; busy: number } {
    return { total: this.slots, busy: this.tasks.size };
  }

  retainedJobs(): string[] {
    return this.store.jobsWithPartitions();
  }

  private taskLog(tdd: TaskDeploymentDescriptor__Output): Record<string, unknown> {
    const e = tdd.execution!;
    return { jobId: e.job_id, vertexId: e.vertex_id, vertexName: tdd.vertex_name, subtask: e.subtask, attempt: e.attempt, epoch: tdd.epoch };
  }

  /**
   * Fences a JobMaster call: calls from an epoch older than the newest leader this TaskManager
   * knows are rejected with STALE_EPOCH, and logged, since they come from a deposed leader.
   */
  private async checkEpoch(method: string, epoch: number): Promise<void> {
    try {
      await this.fence.admit(epoch);
    } catch (err) {
      this.logger.warn({ event: 'fence.reject', method, epoch, highestEpoch: this.fence.highest(), reason: errorMessage(err) }, 'rejected a call of a deposed or unknown JobMaster');
      throw err;
    }
  }

  /**
   * The second half of fencing a JobMaster call: the epoch says the leader is current, the session
   * says the caller is a leader at all. Only leaders this TaskManager registered with learned its
   * session; a client that merely holds the cluster secret and guesses the current epoch (a
   * small number) is refused here, before it can deploy, cancel, release or disconnect anything.
   */
  private checkSession(method: string, session: string): void {
    if (sameSecret(this.session, session)) return;
    this.logger.warn({ event: 'session.reject', method }, 'refused a JobMaster call without this TaskManager\'s session');
    throw new PermissionDeniedError(`${method} refused: the call does not carry the session ${this.id} registered with`);
  }

  /**
   * A leader of `epoch` was elected: from now on calls of older leaders are refused, also on a
   * TaskManager the new leader has not called yet (the fence otherwise learns epochs from calls).
   */
  onLeaderElected(epoch: number): void {
    this.fence.raise(epoch);
  }

  handlers(): TaskExecutorGatewayHandlers {
    return {
      DeployTask: handleUnary(async (tdd) => {
        await this.checkEpoch('DeployTask', tdd.epoch);
        this.checkSession('DeployTask', tdd.session_id);
        this.deploy(tdd);
        return { accepted: true };
      }),
      CancelTask: handleUnary(async (req) => {
        await this.checkEpoch('CancelTask', req.epoch);
        this.checkSession('CancelTask', req.session_id);
        const t = req.execution ? this.tasks.get(attemptKeyOf(req.execution, req.epoch)) : undefined;
        if (!t) return { found: false };
        t.canceledByJobMaster = true;
        t.controller.abort('canceled by the JobMaster');
        return { found: true };
      }),
      ReleasePartitions: handleUnary(async (req) => {
        await this.checkEpoch('ReleasePartitions', req.epoch);
        this.checkSession('ReleasePartitions', req.session_id);
        return { released: await this.store.release(req.partitions) };
      }),
      GetAndRetainPartitionsWithMetrics: handleUnary(async (req) => {
        await this.checkEpoch('GetAndRetainPartitionsWithMetrics', req.epoch);
        this.checkSession('GetAndRetainPartitionsWithMetrics', req.session_id);
        this.stopRetentionTimer(req.job_id);
        return { partitions: this.store.listFinished(req.job_id) };
      }),
      HeartbeatFromJobManager: handleUnary(async (req) => {
        await this.checkEpoch('HeartbeatFromJobManager', req.epoch);
        this.checkSession('HeartbeatFromJobManager', req.session_id);
        return { task_manager_id: this.id };
      }),
      DisconnectJob: handleUnary(async (req) => {
        await this.checkEpoch('DisconnectJob', req.epoch);
        this.checkSession('DisconnectJob', req.session_id);
        this.stopRetentionTimer(req.job_id);
        for (const t of this.tasks.values()) {
          if (t.tdd.execution?.job_id === req.job_id) t.controller.abort('job disconnected');
        }
        if (req.release_partitions) {
          const n = await this.store.releaseJob(req.job_id);
          this.readCapabilities.forget(req.job_id);
          this.logger.info({ jobId: req.job_id, partitions: n }, 'released the partitions of a finished job');
        }
        this.recoveryEnabled.delete(req.job_id);
        return {};
      }),
    };
  }

  private deploy(tdd: TaskDeploymentDescriptor__Output): void {
    const exec = tdd.execution;
    if (!exec) throw new ReboundError(ErrorCode.ILLEGAL_STATE, 'deployment without an execution id');
    const connected = this.jobLeader?.connectedEpoch();
    if (connected === undefined || connected < tdd.epoch) {
      // A new leader can deploy as soon as it accepted our registration, before its answer
      // reached us: our slots are not offered to it yet, which it retries (not a task failure).
      throw new ReboundError(ErrorCode.SLOT_UNAVAILABLE, `${this.id} has not finished registering with the JobMaster of epoch ${tdd.epoch}`);
    }
    if (connected > tdd.epoch) {
      throw new ReboundError(ErrorCode.STALE_EPOCH, `not registered with the JobMaster of epoch ${tdd.epoch} (registered with epoch ${connected})`);
    }
    if (this.tasks.size >= this.slots) {
      throw new ReboundError(ErrorCode.SLOT_UNAVAILABLE, `all ${this.slots} slots of ${this.id} are busy`);
    }
    const key = attemptKeyOf(exec, tdd.epoch);
    if (this.tasks.has(key)) return;
    const jobConfig = Configuration.of(tdd.config);
    this.recoveryEnabled.set(exec.job_id, jobConfig.getBoolean('execution.batch.job-recovery.enabled'));
    this.readCapabilities.grant(exec.job_id, tdd.partition_read_capability);
    const task: RunningTask = { tdd, controller: new AbortController(), epoch: tdd.epoch, canceledByJobMaster: false };
    this.tasks.set(key, task);
    this.logger.info({ event: 'task.deploy', ...this.taskLog(tdd) }, 'task deployed');
    void this.execute(task, jobConfig, () => this.tasks.delete(key));
  }

  /** `freeSlot` runs before the final state is reported, so the JobMaster may reuse the slot at once. */
  private async execute(task: RunningTask, jobConfig: Configuration, freeSlot: () => void): Promise<void> {
    const { tdd } = task;
    const exec = tdd.execution!;
    const jl = this.jobLeader!;
    try {
      const operators = await this.modules.operators(tdd.module_digest, tdd.job_args, tdd.working_directory, () => jl.fetchArtifact(exec.job_id, task.epoch));
      const metrics = await runTask({
        tdd,
        operators,
        store: this.store,
        clients: this.clients,
        taskManagerId: this.id,
        config: jobConfig,
        signal: task.controller.signal,
        requestSplit: (operatorId) => jl.requestSplit({ execution: exec, epoch: task.epoch, operator_id: operatorId }),
        sendCoordinationRequest: async (operatorId, requestJson) =>
          (await jl.sendCoordinationRequest({ execution: exec, epoch: task.epoch, operator_id: operatorId, request_json: requestJson })).response_json,
      });
      this.logger.info({ event: 'task.finish', ...this.taskLog(tdd), recordsIn: metrics.records_in, recordsOut: metrics.records_out }, 'task finished');
      freeSlot();
      await jl.reportTaskState({ execution: exec, state: 'FINISHED', task_manager_id: this.id, epoch: task.epoch, io_metrics: metrics });
    } catch (err) {
      freeSlot();
      if (task.controller.signal.aborted) {
        const reason = String(task.controller.signal.reason);
        if (task.canceledByJobMaster) {
          this.logger.info({ event: 'task.cancel', ...this.taskLog(tdd), reason }, 'task canceled');
          await jl.reportTaskState({ execution: exec, state: 'CANCELED', task_manager_id: this.id, epoch: task.epoch });
        } else {
          this.logger.warn({ event: 'task.fail', ...this.taskLog(tdd), reason }, 'task failed');
        }
        return;
      }
      const pnf = err instanceof InputPartitionNotFoundError ? err : undefined;
      const code = err instanceof ReboundError ? err.code : ErrorCode.USER_CODE;
      const message = `${tdd.vertex_name} (${exec.subtask + 1}/${tdd.parallelism}) attempt ${exec.attempt}: ${errorMessage(err)}`;
      this.logger.warn({ event: 'task.fail', ...this.taskLog(tdd), code, err: errorMessage(err) }, 'task failed');
      await jl.reportTaskState({
        execution: exec,
        state: 'FAILED',
        task_manager_id: this.id,
        epoch: task.epoch,
        error_code: code,
        error_message: message,
        missing_partition: pnf?.partition ?? null,
      });
    }
  }

  /**
   * Our JobMaster is gone. Running tasks cannot finish for anyone (a new leader would not accept
   * their results), so they fail and free their slots. Finished partitions of jobs with batch
   * recovery enabled are kept for `taskmanager.registration.timeout` so that a new leader can
   * reuse them; the others are released now.
   */
  onJobMasterLost(epoch: number, reason: string): void {
    for (const t of this.tasks.values()) {
      if (t.epoch <= epoch) t.controller.abort(`JobMaster lost: ${reason}`);
    }
    const timeoutMs = this.config.getDurationMs('taskmanager.registration.timeout');
    for (const jobId of this.store.jobsWithPartitions()) {
      if (this.recoveryEnabled.get(jobId)) {
        if (this.retention.has(jobId)) continue;
        this.logger.info({ jobId, timeoutMs }, 'retaining partitions of the job for a new leader');
        const timer = setTimeout(() => {
          this.retention.delete(jobId);
          void this.store.releaseJob(jobId).then((n) =>
            this.logger.warn({ jobId, partitions: n, timeoutMs }, 'no leader took the retained partitions in time; released them'),
          );
        }, timeoutMs);
        this.retention.set(jobId, timer);
      } else {
        void this.store.releaseJob(jobId).then((n) => this.logger.info({ jobId, partitions: n }, 'released the partitions of the lost JobMaster'));
      }
    }
  }

  private stopRetentionTimer(jobId: string): void {
    const t = this.retention.get(jobId);
    if (t) {
      clearTimeout(t);
      this.retention.delete(jobId);
    }
  }

  async close(): Promise<void> {
    for (const t of this.tasks.values()) t.controller.abort('TaskManager shutting down');
    for (const timer of this.retention.values()) clearTimeout(timer);
    this.retention.clear();
    this.clients.close();
  }

  now(): number {
    return this.clock.now();
  }
}

/**
 * A task is one attempt deployed by one leader. A leader that restarts a job from scratch numbers
 * attempts from 0 again, so without the epoch its deployment would be taken for a (still aborting)
 * task of the deposed leader and silently dropped.
 */
function attemptKeyOf(e: { job_id: string; vertex_id: string; subtask: number; attempt: number }, epoch: number): string {
  return `${epoch}/${e.job_id}/${attemptKey(e)}`;
}
