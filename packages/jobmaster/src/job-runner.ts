import { errorMessage, JobModuleInvalidError, isNotLeader } from '@rebound/core';
import type { Clock, Configuration, JobGraph__Output, Logger } from '@rebound/core';
import { FileSystemJobEventStore, JobEventManager } from '@rebound/event-store';
import type { HighAvailabilityServices, JobGraphStore } from '@rebound/ha';
import type { CrashPoints } from './crash-points.js';
import { JobMaster } from './job-master.js';
import type { JobRecords } from './job-records.js';
import { applyCommit, sinkDirectoriesOf } from './sink-committer.js';
import type { TaskManagerDirectory } from './recovery/task-manager-directory.js';
import type { ShuffleMaster } from './shuffle/shuffle-master.js';
import { TaskManagerShuffleMaster } from './shuffle/task-manager-shuffle-master.js';
import type { TaskExecutorGateway } from './task-executor-gateway.js';
import type { RegisteredTaskManager, TaskManagerRegistry } from './task-manager-registry.js';
import type { JobUserCode } from './user-code/job-user-code.js';
import type { UserCodeWorkers } from './user-code/user-code-workers.js';

/** What a JobRunner needs from the leadership it runs jobs for. */
export interface JobRunnerOptions {
  readonly epoch: number;
  readonly jobmasterId: string;
  /** Address TaskManagers reach this leader at. */
  readonly address: string;
  /** For the JobEventStore's directory and fencing. */
  readonly ha: Pick<HighAvailabilityServices, 'storageDir' | 'fencingEpochSource'>;
  /** The job store of this leadership (writes fenced by its epoch). */
  readonly store: JobGraphStore;
  readonly records: JobRecords;
  readonly registry: TaskManagerRegistry;
  readonly gateway: TaskExecutorGateway;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Runs each job's module, enumerators and coordinators in a worker thread of its own. */
  readonly userCodeWorkers: UserCodeWorkers;
  readonly crashPoints?: CrashPoints;
  readonly electedAtMs: number;
  /** When the previous leader last renewed its lease (if this leadership took over an expired one). */
  readonly previousLeaderLastHeardMs?: number;
  readonly taskManagerDirectory?: TaskManagerDirectory;
  /** Where the jobs' partitions are kept; the TaskManagers that produce them by default. */
  readonly shuffleMaster?: ShuffleMaster;
}

/**
 * Flink's JobManagerRunner, for every job of one leadership: takes a job from its stored graph
 * to a started JobMaster (crash quarantine, its user-code worker, event store), takes over the
 * jobs a previous leader left unfinished, and records each job's end.
 */
export class JobRunner {
  private readonly jobs = new Map<string, JobMaster>();
  private closed = false;
  private readonly shuffleMaster: ShuffleMaster;

  constructor(private readonly opts: JobRunnerOptions) {
    this.shuffleMaster =
      opts.shuffleMaster ?? new TaskManagerShuffleMaster({ epoch: opts.epoch, gateway: opts.gateway });
  }

  get(jobId: string): JobMaster | undefined {
    return this.jobs.get(jobId);
  }

  has(jobId: string): boolean {
    return this.jobs.has(jobId);
  }

  all(): IterableIterator<JobMaster> {
    return this.jobs.values();
  }

  jobIds(): string[] {
    return [...this.jobs.keys()];
  }

  /**
   * Starts a stored job. If it cannot be started it is marked FAILED, with the reason, before the
   * error is thrown: without a terminal status every future leader would try again.
   */
  async start(graph: JobGraph__Output, takeover: boolean): Promise<void> {
    try {
      await this.run(graph, takeover);
    } catch (err) {
      this.jobs.delete(graph.job_id);
      // The job did not fail: this leadership ended, and the next leader takes the job over.
      if (isNotLeader(err)) throw err;
      await this.markFailed(graph.job_id, takeover ? `takeover failed: ${errorMessage(err)}` : errorMessage(err));
      throw err;
    }
  }

  private async markFailed(jobId: string, failure: string): Promise<void> {
    const { store, clock, logger } = this.opts;
    await store
      .markTerminal(jobId, { state: 'FAILED', finishedAtMs: clock.now(), failure })
      .catch((err: unknown) => logger.error({ jobId, err: errorMessage(err) }, 'cannot mark the job failed'));
  }

  /** Takes over every job a previous leader left unfinished. */
  async recoverJobs(): Promise<void> {
    const { store, records, logger, clock } = this.opts;
    for (const { jobId, damage } of await store.listUnfinishedJobs()) {
      if (damage) {
        // Whether it finished (and committed) is unknown: running it again could overwrite its
        // output. It stays listed with the reason; every other job is taken over.
        logger.error({ jobId, damage }, 'skipping a job whose stored files cannot be read');
        continue;
      }
      let graph: JobGraph__Output;
      try {
        graph = (await store.getJob(jobId)).graph;
        const manifest = await records.commitManifest(jobId, sinkDirectoriesOf(graph));
        if (manifest) {
          // The previous leader decided the job was done and died while committing.
          await applyCommit(manifest);
          await store.markTerminal(jobId, { state: 'FINISHED', finishedAtMs: clock.now() });
          logger.info({ jobId }, 'completed the commit a previous leader started');
          continue;
        }
      } catch (err) {
        if (isNotLeader(err)) return;
        logger.error({ jobId, err: errorMessage(err) }, 'cannot take over job');
        await this.markFailed(jobId, `takeover failed: ${errorMessage(err)}`);
        continue;
      }
      // A job that cannot be started is marked FAILED by start(); the others are still taken over.
      await this.start(graph, true).catch((err: unknown) =>
        logger.error({ jobId, err: errorMessage(err) }, 'cannot take over job'),
      );
    }
  }

  /**
   * Counts, in the HA directory and before anything of the job's code runs here, the JobMasters
   * that started to load a job and did not finish loading it. A job that took `jobmaster.job-load.max-crashes`
   * JobMasters down in a row (their attempt was recorded, never cleared) is failed instead of
   * loaded again, so a poison job cannot take every JobMaster of the cluster down one by one.
   */
  private async recordLoadAttempt(jobId: string): Promise<void> {
    const { records, config, epoch, logger } = this.opts;
    const { attempts: crashed, damage } = await records.loadAttempts(jobId);
    if (damage) logger.warn({ jobId, damage }, 'counting the JobMasters that died loading this job from 0 again');
    const max = config.getInt('jobmaster.job-load.max-crashes');
    if (crashed >= max) {
      throw new JobModuleInvalidError(
        `job ${jobId} was not loaded again: ${crashed} JobMaster(s) in a row died while loading it (jobmaster.job-load.max-crashes=${max})`,
      );
    }
    await records.saveLoadAttempts(jobId, crashed + 1, epoch);
  }

  private async run(graph: JobGraph__Output, takeover: boolean): Promise<void> {
    const o = this.opts;
    const jobId = graph.job_id;
    const { modulePath } = await o.store.getJob(jobId);
    await this.recordLoadAttempt(jobId);
    const jobConfig = o.config.with(graph.config);
    const logger = o.logger.child({ jobId });
    const userCode = await o.userCodeWorkers.start({
      jobId,
      modulePath,
      args: graph.job_args,
      cwd: graph.working_directory || undefined,
      jobConfig,
      logger,
    });
    try {
      // Loaded without dying: the next leader may load it again. Only loading counts: a leader
      // killed later, while it reconciles, says nothing about the job's code.
      await o.records.saveLoadAttempts(jobId, 0, o.epoch);
      await this.startJobMaster(graph, takeover, userCode, jobConfig, logger);
    } catch (err) {
      await userCode.close();
      throw err;
    }
  }

  private async startJobMaster(
    graph: JobGraph__Output,
    takeover: boolean,
    userCode: JobUserCode,
    jobConfig: Configuration,
    logger: Logger,
  ): Promise<void> {
    const o = this.opts;
    const jobId = graph.job_id;
    const jobRecoveryDisabled = this.jobRecoveryDisabled(jobConfig, logger);
    const recoveryEnabled = jobRecoveryDisabled === '';
    const events = recoveryEnabled
      ? new JobEventManager(
          new FileSystemJobEventStore({
            haDir: o.ha.storageDir,
            jobId,
            epoch: o.epoch,
            jobMasterId: o.jobmasterId,
            currentLeaderEpoch: o.ha.fencingEpochSource(o.epoch),
            config: jobConfig,
            clock: o.clock,
            logger: logger.child({ component: 'JobEventStore' }),
            // The job keeps running; it just can no longer be recovered. Say so where users look.
            onDisabled: (state, err) => {
              job.notes.push(
                `job events are no longer recorded (${state}: ${err.message}); a JobMaster failover will restart this job from scratch`,
              );
            },
          }),
          o.clock,
        )
      : undefined;
    const recoveries = await o.records.recoveries(jobId);
    const partitionReadCapability = await o.records.readCapability(jobId);
    const job = new JobMaster(graph, userCode, {
      epoch: o.epoch,
      jobmasterId: o.jobmasterId,
      address: o.address,
      config: o.config,
      registry: o.registry,
      gateway: o.gateway,
      shuffleMaster: this.shuffleMaster,
      logger: o.logger,
      clock: o.clock,
      events,
      jobRecoveryDisabled,
      crashPoints: o.crashPoints,
      electedAtMs: o.electedAtMs,
      previousLeaderLastHeardMs: o.previousLeaderLastHeardMs,
      taskManagerDirectory: o.taskManagerDirectory,
      recoveries: recoveries.reports,
      partitionReadCapability,
      saveRecoveries: (id, reports) => o.records.saveRecoveries(id, reports),
      saveCommitManifest: async (id, manifest) => {
        await o.records.saveCommitManifest(id, manifest);
        await o.crashPoints?.inCommit(manifest);
      },
      onTerminal: (j) => this.onJobTerminal(j),
      onSlotsFreed: () => this.scheduleAll(),
    });
    if (recoveries.damage) {
      logger.warn({ damage: recoveries.damage }, 'the recovery reports of earlier failovers are lost');
      job.notes.push(`earlier recovery reports are lost: ${recoveries.damage}`);
    }
    if (takeover) {
      logger.info({ name: graph.name, recoveryEnabled }, 'taking over an unfinished job');
      if (!recoveryEnabled) job.notes.push(`JobMaster failover: restarted from scratch (${jobRecoveryDisabled})`);
    }
    this.jobs.set(jobId, job);
    await job.start(takeover);
  }

  /**
   * Why batch job recovery is off for a job, or '' when it is on. FLIP-383: a ShuffleMaster that
   * cannot snapshot its state could not say, after a failover, where finished work is kept; the
   * job then runs without recovery, and says so (log and status) since the user asked for it.
   */
  private jobRecoveryDisabled(jobConfig: Configuration, logger: Logger): string {
    if (!jobConfig.getBoolean('execution.batch.job-recovery.enabled'))
      return 'execution.batch.job-recovery.enabled is false';
    if (this.shuffleMaster.supportsBatchSnapshot()) return '';
    const reason = `the ${this.shuffleMaster.type} shuffle master does not support batch snapshots`;
    logger.warn(
      { shuffleType: this.shuffleMaster.type },
      `batch job recovery is disabled for this job: ${reason}; a JobMaster failover restarts it from scratch`,
    );
    return reason;
  }

  /** Stores the job's final status and failures, marks it terminal, and lets the TaskManagers go. */
  private async onJobTerminal(job: JobMaster): Promise<void> {
    if (this.closed) return;
    const { store, records, registry, gateway, epoch, logger } = this.opts;
    try {
      await records.saveFinalStatus(job.jobId, job.status());
      const history = job.exceptionHistory.snapshot();
      if (history.entries.length > 0) await records.saveExceptions(job.jobId, history);
      await store.markTerminal(job.jobId, {
        state: job.state as 'FINISHED' | 'FAILED' | 'CANCELED',
        finishedAtMs: job.finishedAtMs,
        ...(job.failure ? { failure: job.failure } : {}),
      });
    } catch (err) {
      if (isNotLeader(err)) {
        // Its partitions stay: the next leader finds the job unfinished and may need them.
        logger.warn({ jobId: job.jobId, err: errorMessage(err) }, 'leadership ended before the job end was recorded');
        this.jobs.delete(job.jobId);
        return;
      }
      logger.error({ jobId: job.jobId, err: errorMessage(err) }, 'cannot record the terminal state of a job');
    }
    this.jobs.delete(job.jobId);
    this.shuffleMaster.releaseJob(job.jobId);
    for (const tm of registry.all()) {
      gateway
        .disconnectJob(tm, { epoch, job_id: job.jobId, release_partitions: true })
        .catch((err: unknown) => logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'DisconnectJob failed'));
    }
  }

  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobIds: readonly string[]): void {
    for (const job of this.jobs.values()) job.onTaskManagerRegistered(tm, retainedJobIds);
    this.scheduleAll();
  }

  /** A shuffle worker registered: deployments that waited for one can go now. */
  onShuffleWorkerRegistered(): void {
    this.scheduleAll();
  }

  onTaskManagerLost(tmId: string, reason: string, keptPartitionsOf?: ReadonlySet<string>): void {
    for (const job of this.jobs.values())
      job.onTaskManagerLost(tmId, reason, keptPartitionsOf?.has(job.jobId) ?? false);
    this.scheduleAll();
  }

  private scheduleAll(): void {
    for (const job of this.jobs.values()) job.schedule();
  }

  /** Leadership lost: suspend every job without touching TaskManagers or stored jobs. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.jobs.values()) await job.suspend();
    this.jobs.clear();
  }
}
