import {
  ClusterSecurity,
  Configuration,
  IllegalStateError,
  SlotUnavailableError,
  StaleEpochError,
  handleUnary,
} from '@rebound/core';
import type {
  Clock,
  HeldTask,
  Logger,
  TaskDeploymentDescriptor__Output,
  TaskExecutorGatewayHandlers,
} from '@rebound/core';
import { LeaderCallGuard, type EpochFence } from '@rebound/ha';
import type { JobLeaderService } from './job-leader-service.js';
import { AttemptReceipts, HeldOutcomes, heldTaskOf, keepsRunningTasks } from './held-tasks.js';
import { JobTimers } from './job-timers.js';
import type { ModuleCache } from './module-cache.js';
import { PartitionClientPool, ShuffleWorkerClientPool, type PartitionStore } from '@rebound/partition';
import type { ReadCapabilities } from './read-capabilities.js';
import { attemptKeyOf, taskLogOf, type RunningTask } from './running-task.js';
import { ShuffleEnvironment } from './shuffle-environment.js';
import { runTaskAttempt, type TaskAttemptContext } from './task-attempt.js';

/**
 * Flink's TaskExecutor: slots, the task lifecycle, and what happens to a job's partitions when
 * its JobMaster goes away. Every JobMaster→TaskManager call is fenced by the leader epoch.
 */
export class TaskExecutor {
  private readonly tasks = new Map<string, RunningTask>();
  /** Jobs whose partitions we keep for a future leader, with the timer that releases them. */
  private readonly retention = new JobTimers();
  /** Whether each job (as last deployed) has batch job recovery enabled. */
  private readonly recoveryEnabled = new Map<string, boolean>();
  /** Ended tasks of keep-running jobs, for the next leader's reconciliation. */
  private readonly held = new HeldOutcomes();
  /** Jobs whose kept tasks wait for a leader, with the timer that fails them (registration timeout). */
  private readonly leaderless = new JobTimers();
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
    session: string,
    /** The read capability of each job that ran here (checked by the PartitionService). */
    private readonly readCapabilities: ReadCapabilities,
  ) {
    this.guard = new LeaderCallGuard(fence, session, 'TaskManager', id, logger);
    const security = ClusterSecurity.of(config);
    const channels = { credentials: security.channelCredentials(), channelOptions: security.channelOptions() };
    this.clients = new PartitionClientPool(channels);
    this.shuffleWorkerClients = new ShuffleWorkerClientPool(channels);
    this.shuffle = new ShuffleEnvironment({
      taskManagerId: this.id,
      store: this.store,
      partitionClients: this.clients,
      shuffleWorkerClients: this.shuffleWorkerClients,
      logger: this.logger,
    });
    this.attemptContext = {
      taskManagerId: this.id,
      config: this.config,
      logger: this.logger,
      shuffle: this.shuffle,
      modules: this.modules,
      held: this.held,
      jobLeader: () => this.jobLeader,
    };
  }

  private readonly clients: PartitionClientPool;
  private readonly shuffleWorkerClients: ShuffleWorkerClientPool;
  /** Where tasks' partitions go and their inputs come from. */
  readonly shuffle: ShuffleEnvironment;

  private readonly guard: LeaderCallGuard;

  private readonly attemptContext: TaskAttemptContext;

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

  /** Jobs this TaskManager keeps something of: partitions, tasks kept running, or their ends. */
  retainedJobs(): string[] {
    const jobs = new Set(this.store.jobsWithPartitions());
    for (const t of this.tasks.values())
      if (t.keepRunning && t.leaderlessSinceMs !== undefined) jobs.add(t.tdd.execution!.job_id);
    for (const j of this.held.jobs()) jobs.add(j);
    return [...jobs];
  }

  /**
   * Fences a JobMaster call: calls from an epoch older than the newest leader this TaskManager
   * knows are rejected with STALE_EPOCH, and logged, since they come from a deposed leader.
   */
  private checkEpoch(method: string, epoch: number): Promise<void> {
    return this.guard.admitEpoch(method, epoch);
  }

  /** The second half of fencing a JobMaster call (see LeaderCallGuard): the caller holds our session. */
  private checkSession(method: string, session: string): void {
    this.guard.checkSession(method, session);
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
      }, this.logger),
      CancelTask: handleUnary(async (req) => {
        await this.checkEpoch('CancelTask', req.epoch);
        this.checkSession('CancelTask', req.session_id);
        // A task kept through a failover is named by the epoch that deployed it; it obeys only
        // the leader it answers to (the fence already refused older ones).
        const t = req.execution
          ? this.tasks.get(attemptKeyOf(req.execution, req.deploy_epoch || req.epoch))
          : undefined;
        if (!t || t.leaderEpoch > req.epoch) return { found: false };
        t.canceledByJobMaster = true;
        t.controller.abort('canceled by the JobMaster');
        return { found: true };
      }, this.logger),
      ReleasePartitions: handleUnary(async (req) => {
        await this.checkEpoch('ReleasePartitions', req.epoch);
        this.checkSession('ReleasePartitions', req.session_id);
        return { released: await this.store.release(req.partitions) };
      }, this.logger),
      GetAndRetainPartitionsWithMetrics: handleUnary(async (req) => {
        await this.checkEpoch('GetAndRetainPartitionsWithMetrics', req.epoch);
        this.checkSession('GetAndRetainPartitionsWithMetrics', req.session_id);
        this.retention.stop(req.job_id);
        const tasks = this.heldTasks(req.job_id, req.epoch);
        if (req.adopt_tasks) this.adoptTasks(req.job_id, req.epoch);
        return { partitions: this.store.listFinished(req.job_id), tasks };
      }, this.logger),
      HeartbeatFromJobManager: handleUnary(async (req) => {
        await this.checkEpoch('HeartbeatFromJobManager', req.epoch);
        this.checkSession('HeartbeatFromJobManager', req.session_id);
        return { task_manager_id: this.id };
      }, this.logger),
      DisconnectJob: handleUnary(async (req) => {
        await this.checkEpoch('DisconnectJob', req.epoch);
        this.checkSession('DisconnectJob', req.session_id);
        this.retention.stop(req.job_id);
        for (const t of this.tasks.values()) {
          if (t.tdd.execution?.job_id === req.job_id) t.controller.abort('job disconnected');
        }
        if (req.release_partitions) {
          const n = await this.store.releaseJob(req.job_id);
          this.readCapabilities.forget(req.job_id);
          this.logger.info({ jobId: req.job_id, partitions: n }, 'released the partitions of a finished job');
        }
        this.recoveryEnabled.delete(req.job_id);
        this.held.forgetJob(req.job_id);
        this.leaderless.stop(req.job_id);
        return {};
      }, this.logger),
    };
  }

  private deploy(tdd: TaskDeploymentDescriptor__Output): void {
    const exec = tdd.execution;
    if (!exec) throw new IllegalStateError('deployment without an execution id');
    const connected = this.jobLeader?.connectedEpoch();
    if (connected === undefined || connected < tdd.epoch) {
      // A new leader can deploy as soon as it accepted our registration, before its answer
      // reached us: our slots are not offered to it yet, which it retries (not a task failure).
      throw new SlotUnavailableError(
        `${this.id} has not finished registering with the JobMaster of epoch ${tdd.epoch}`,
      );
    }
    if (connected > tdd.epoch) {
      throw new StaleEpochError(
        tdd.epoch,
        connected,
        `not registered with the JobMaster of epoch ${tdd.epoch} (registered with epoch ${connected})`,
      );
    }
    if (this.tasks.size >= this.slots) {
      throw new SlotUnavailableError(`all ${this.slots} slots of ${this.id} are busy`);
    }
    const key = attemptKeyOf(exec, tdd.epoch);
    if (this.tasks.has(key)) return;
    const jobConfig = Configuration.of(tdd.config);
    this.recoveryEnabled.set(exec.job_id, jobConfig.getBoolean('execution.batch.job-recovery.enabled'));
    this.readCapabilities.grant(exec.job_id, tdd.partition_read_capability);
    const keepRunning = keepsRunningTasks(jobConfig);
    const task: RunningTask = {
      tdd,
      controller: new AbortController(),
      epoch: tdd.epoch,
      leaderEpoch: tdd.epoch,
      keepRunning,
      leaderlessSinceMs: undefined,
      // Only an attempt a next leader may adopt needs its coordinator responses kept.
      received: new AttemptReceipts(
        keepRunning ? jobConfig.getInt('execution.batch.job-recovery.max-held-coordinator-responses') : 0,
      ),
      canceledByJobMaster: false,
    };
    this.tasks.set(key, task);
    this.logger.info({ event: 'task.deploy', ...taskLogOf(tdd) }, 'task deployed');
    void runTaskAttempt(this.attemptContext, task, jobConfig, () => this.tasks.delete(key));
  }

  /** The job's tasks earlier leaders than `epoch` deployed, kept running or ended here. */
  private heldTasks(jobId: string, epoch: number): HeldTask[] {
    const out = this.held.reports(jobId).filter((t) => Number(t.deploy_epoch) < epoch);
    for (const t of this.tasks.values()) {
      if (t.keepRunning && t.epoch < epoch && t.tdd.execution!.job_id === jobId)
        out.push(heldTaskOf(t.tdd, 'RUNNING', t.received));
    }
    return out;
  }

  /**
   * The leader of `epoch` takes the job's kept tasks: from now on they report to it and ask it for
   * splits, and no older leader is obeyed. The leader cancels those it does not keep.
   */
  private adoptTasks(jobId: string, epoch: number): void {
    this.leaderless.stop(jobId);
    let n = 0;
    for (const t of this.tasks.values()) {
      if (!t.keepRunning || t.tdd.execution!.job_id !== jobId || t.leaderEpoch >= epoch) continue;
      t.leaderEpoch = epoch;
      t.leaderlessSinceMs = undefined;
      n++;
    }
    if (n > 0) this.logger.info({ event: 'task.adopt', jobId, epoch, tasks: n }, 'a new leader adopted running tasks');
  }

  /**
   * Our JobMaster is gone. Running tasks cannot finish for anyone (a new leader would not accept
   * their results), so they fail and free their slots. Finished partitions of jobs with batch
   * recovery enabled are kept for `taskmanager.registration.timeout` so that a new leader can
   * reuse them; the others are released now.
   */
  onJobMasterLost(epoch: number, reason: string): void {
    const timeoutMs = this.config.getDurationMs('taskmanager.registration.timeout');
    for (const t of this.tasks.values()) {
      if (t.leaderEpoch > epoch) continue;
      if (t.keepRunning) this.keepWithoutLeader(t, timeoutMs);
      else t.controller.abort(`JobMaster lost: ${reason}`);
    }
    for (const jobId of this.store.jobsWithPartitions()) {
      if (this.recoveryEnabled.get(jobId)) {
        if (this.retention.has(jobId)) continue;
        this.logger.info({ jobId, timeoutMs }, 'retaining partitions of the job for a new leader');
        this.retention.start(jobId, timeoutMs, () => {
          void this.store
            .releaseJob(jobId)
            .then((n) =>
              this.logger.warn(
                { jobId, partitions: n, timeoutMs },
                'no leader took the retained partitions in time; released them',
              ),
            );
        });
      } else {
        void this.store
          .releaseJob(jobId)
          .then((n) => this.logger.info({ jobId, partitions: n }, 'released the partitions of the lost JobMaster'));
      }
    }
  }

  /**
   * A task of a keep-running job goes on without a leader: until one adopts it, or until
   * `taskmanager.registration.timeout`, after which the job's kept tasks fail (nothing runs for
   * ever without a leader; their partitions go with the retention timer, as today).
   */
  private keepWithoutLeader(t: RunningTask, timeoutMs: number): void {
    t.leaderlessSinceMs ??= this.clock.now();
    const jobId = t.tdd.execution!.job_id;
    if (this.leaderless.has(jobId)) return;
    this.logger.info({ jobId, timeoutMs }, 'keeping the running tasks of the job for a new leader');
    this.leaderless.start(jobId, timeoutMs, () => {
      for (const task of this.tasks.values()) {
        if (task.tdd.execution!.job_id === jobId && task.leaderlessSinceMs !== undefined)
          task.controller.abort(`no leader adopted the task within ${timeoutMs} ms`);
      }
      this.held.forgetJob(jobId);
    });
  }

  /**
   * Registered with the leader of `epoch`. Kept tasks that answer to this very leader cannot be
   * adopted by it: it forgot this TaskManager (and failed them over) when it took the new
   * registration, so they stop now instead of holding slots until the registration timeout.
   */
  onJobMasterConnected(epoch: number): void {
    for (const t of this.tasks.values()) {
      if (t.leaderlessSinceMs !== undefined && t.leaderEpoch >= epoch)
        t.controller.abort('the JobMaster registered this TaskManager anew; its tasks are gone there');
    }
  }

  async close(): Promise<void> {
    for (const t of this.tasks.values()) t.controller.abort('TaskManager shutting down');
    this.retention.clear();
    this.leaderless.clear();
    this.clients.close();
    this.shuffleWorkerClients.close();
  }

  now(): number {
    return this.clock.now();
  }
}
