import { readFile } from 'node:fs/promises';
import { ErrorCode, JobNotFoundError, PeriodicTask, ReboundError, decodeMessage, encodeMessage, errorMessage, newReadCapability } from '@rebound/core';
import type {
  Clock,
  Configuration,
  CoordinationRequest__Output,
  CoordinationResponse,
  FetchJobArtifactRequest__Output,
  JobGraph__Output,
  JobStatus,
  JobStatus__Output,
  JobSummary,
  Logger,
  RecoveryReport,
  SplitRequest__Output,
  SplitResponse,
  SubmitJobRequest__Output,
  TaskExecutionState__Output,
} from '@rebound/core';
import { buildJob, loadJobModule } from '@rebound/api';
import { FileSystemJobEventStore, JobEventManager } from '@rebound/event-store';
import type { HighAvailabilityServices, JobGraphStore } from '@rebound/ha';
import { CrashPoints } from './crash-points.js';
import { authorizeExecutionCall } from './execution-authorization.js';
import type { JobModuleProbe } from './job-module-probe.js';
import { ExceptionHistory, type ExceptionHistorySnapshot } from './exception-history.js';
import { RpcTaskExecutorGateway, type TaskExecutorGateway } from './task-executor-gateway.js';
import { JobMaster } from './job-master.js';
import { applyCommit, type CommitManifest } from './sink-committer.js';
import { TaskManagerRegistry } from './task-manager-registry.js';

const COMMIT_MANIFEST = 'commit.json';
const FINAL_STATUS = 'final-status.pb';
/** A finished job's task failures (`ExceptionHistory.snapshot()`), for `/jobs/:id/exceptions`. */
const EXCEPTIONS = 'exceptions.json';
/** Attachment of a job in the JobGraphStore holding its recovery reports (JSON). */
export const RECOVERIES_ATTACHMENT = 'recoveries.json';
const RECOVERIES = RECOVERIES_ATTACHMENT;
const LOAD_ATTEMPTS = 'load-attempts.json';
/**
 * Attachment holding the job's partition read capability: made by the first leader that runs the
 * job, kept for every later one, so partitions written under one leader stay readable under the next.
 */
export const READ_CAPABILITY_ATTACHMENT = 'partition-read-capability';

/**
 * Everything that exists only while this process leads: the TaskManager registry and a
 * JobMaster per running job. Created on grantLeadership, closed on revokeLeadership.
 */
export class LeaderServices {
  readonly registry: TaskManagerRegistry;
  /** Every call of this leadership to a TaskManager, shared by its JobMasters. */
  private readonly gateway: TaskExecutorGateway;
  private readonly jobs = new Map<string, JobMaster>();
  private readonly store: JobGraphStore;
  private closed = false;
  private readonly electedAtMs: number;
  private readonly crashPoints: CrashPoints | undefined;
  private readonly expiry: PeriodicTask;
  /** Jobs each TaskManager said it retains partitions of when it last registered (REST /cluster). */
  readonly retainedJobsAtRegistration = new Map<string, readonly string[]>();

  constructor(
    readonly epoch: number,
    private readonly jobmasterId: string,
    private readonly address: string,
    private readonly ha: HighAvailabilityServices,
    private readonly config: Configuration,
    private readonly logger: Logger,
    private readonly clock: Clock,
    /** Loads each job module in a worker first (owned by the process: bundled once, not per leadership). */
    private readonly probe: JobModuleProbe,
    /** When the previous leader last renewed its lease (if this leadership took over an expired one). */
    private readonly previousLeaderLastHeardMs?: number,
  ) {
    // Every write of this leadership is fenced by its epoch (etcd: a guarded transaction).
    this.store = ha.leaderJobGraphStore(epoch);
    this.electedAtMs = clock.now();
    // A job is removed between one and two sweeps after it expires; a minute at most keeps the
    // HA directory small without a key of its own.
    const retentionMs = config.getDurationMs('jobstore.expiration-time');
    this.expiry = new PeriodicTask(Math.max(1_000, Math.min(retentionMs, 60_000)), () => this.removeExpiredJobs(), (err) =>
      logger.warn({ err: errorMessage(err) }, 'could not remove expired jobs'),
    );
    this.crashPoints = CrashPoints.from(config, logger);
    this.registry = new TaskManagerRegistry(
      epoch,
      jobmasterId,
      config,
      {
        onTaskManagerRegistered: (tm, retained) => {
          this.retainedJobsAtRegistration.set(tm.id, [...retained]);
          for (const job of this.jobs.values()) job.onTaskManagerRegistered(tm, retained);
          this.scheduleAll();
        },
        onTaskManagerLost: (tmId, reason) => {
          this.retainedJobsAtRegistration.delete(tmId);
          for (const job of this.jobs.values()) job.onTaskManagerLost(tmId, reason);
          this.scheduleAll();
        },
      },
      logger.child({ component: 'TaskManagerRegistry' }),
      clock,
    );
    this.gateway = new RpcTaskExecutorGateway(this.registry);
  }

  async start(): Promise<void> {
    this.registry.start();
    await this.recoverJobs();
    this.expiry.start(true);
  }

  /** Removes terminal jobs older than `jobstore.expiration-time` from the HA directory. */
  private async removeExpiredJobs(): Promise<void> {
    const removed = await this.store.removeExpiredJobs(this.clock.now(), this.config.getDurationMs('jobstore.expiration-time'));
    if (removed.length > 0) this.logger.info({ jobIds: removed }, `removed ${removed.length} expired finished job(s) from the HA directory`);
  }

  /** Takes over every job a previous leader left unfinished. */
  private async recoverJobs(): Promise<void> {
    for (const { jobId, damage } of await this.store.listUnfinishedJobs()) {
      if (damage) {
        // Whether it finished (and committed) is unknown: running it again could overwrite its
        // output. It stays listed with the reason; every other job is taken over.
        this.logger.error({ jobId, damage }, 'skipping a job whose stored files cannot be read');
        continue;
      }
      try {
        const manifest = await this.store.getJobAttachment(jobId, COMMIT_MANIFEST);
        if (manifest) {
          // The previous leader decided the job was done and died while committing.
          await applyCommit(JSON.parse(Buffer.from(manifest).toString('utf8')) as CommitManifest);
          await this.store.markTerminal(jobId, { state: 'FINISHED', finishedAtMs: this.clock.now() });
          this.logger.info({ jobId }, 'completed the commit a previous leader started');
          continue;
        }
        const { graph } = await this.store.getJob(jobId);
        await this.runJob(graph, true);
      } catch (err) {
        this.logger.error({ jobId, err: errorMessage(err) }, 'cannot take over job');
        await this.store.markTerminal(jobId, { state: 'FAILED', finishedAtMs: this.clock.now(), failure: `takeover failed: ${errorMessage(err)}` });
      }
    }
  }

  async submit(req: SubmitJobRequest__Output): Promise<string> {
    const graph = req.job_graph;
    if (!graph || !graph.job_id) throw new ReboundError(ErrorCode.JOB_INVALID, 'submission without a job graph or job id');
    if (this.jobs.has(graph.job_id) || (await this.store.hasJob(graph.job_id))) {
      throw new ReboundError(ErrorCode.JOB_INVALID, `job ${graph.job_id} was already submitted`);
    }
    await this.store.putJob(graph, req.module_bundle);
    try {
      await this.runJob(graph, false);
    } catch (err) {
      // Stored but never started: without a terminal status every future leader would try again.
      this.jobs.delete(graph.job_id);
      await this.store.markTerminal(graph.job_id, { state: 'FAILED', finishedAtMs: this.clock.now(), failure: errorMessage(err) }).catch(() => undefined);
      throw err;
    }
    return graph.job_id;
  }

  /**
   * Counts, in the HA directory and before anything of the job's code runs here, the JobMasters
   * that started to load a job and did not finish loading it. A job that took `jobmaster.job-load.max-crashes`
   * JobMasters down in a row (their attempt was recorded, never cleared) is failed instead of
   * loaded again, so a poison job cannot take every JobMaster of the cluster down one by one.
   */
  private async recordLoadAttempt(jobId: string): Promise<void> {
    const raw = await this.store.getJobAttachment(jobId, LOAD_ATTEMPTS).catch(() => undefined);
    let crashed = 0;
    if (raw) {
      const parsed = JSON.parse(Buffer.from(raw).toString('utf8')) as { attempts?: unknown };
      crashed = typeof parsed.attempts === 'number' ? parsed.attempts : 0;
    }
    const max = this.config.getInt('jobmaster.job-load.max-crashes');
    if (crashed >= max) {
      throw new ReboundError(
        ErrorCode.JOB_MODULE_INVALID,
        `job ${jobId} was not loaded again: ${crashed} JobMaster(s) in a row died while loading it (jobmaster.job-load.max-crashes=${max})`,
      );
    }
    await this.store.putJobAttachment(jobId, LOAD_ATTEMPTS, JSON.stringify({ attempts: crashed + 1, epoch: this.epoch }));
  }

  private async runJob(graph: JobGraph__Output, takeover: boolean): Promise<void> {
    const { modulePath } = await this.store.getJob(graph.job_id);
    await this.recordLoadAttempt(graph.job_id);
    await this.probe.check({
      jobId: graph.job_id,
      modulePath,
      args: graph.job_args,
      cwd: graph.working_directory || undefined,
      timeoutMs: this.config.getDurationMs('jobmaster.job-module.load-timeout'),
    });
    let operators;
    try {
      const def = await loadJobModule(modulePath);
      operators = (await buildJob(def, graph.job_args, { cwd: graph.working_directory || undefined })).operators;
    } catch (err) {
      throw new ReboundError(ErrorCode.JOB_MODULE_INVALID, `job ${graph.job_id}: cannot build the job module on the JobMaster: ${errorMessage(err)}`);
    }
    // Loaded here without dying: the next leader may load it again. Only loading counts: a leader
    // killed later, while it reconciles, says nothing about the job's code.
    await this.store.putJobAttachment(graph.job_id, LOAD_ATTEMPTS, JSON.stringify({ attempts: 0, epoch: this.epoch }));
    const jobConfig = this.config.with(graph.config);
    const recoveryEnabled = jobConfig.getBoolean('execution.batch.job-recovery.enabled');
    const logger = this.logger.child({ jobId: graph.job_id });
    const events = recoveryEnabled
      ? new JobEventManager(
          new FileSystemJobEventStore({
            haDir: this.ha.storageDir,
            jobId: graph.job_id,
            epoch: this.epoch,
            jobMasterId: this.jobmasterId,
            currentLeaderEpoch: this.ha.fencingEpochSource(this.epoch),
            config: jobConfig,
            clock: this.clock,
            logger: logger.child({ component: 'JobEventStore' }),
            // The job keeps running; it just can no longer be recovered. Say so where users look.
            onDisabled: (state, err) => {
              job.notes.push(`job events are no longer recorded (${state}: ${err.message}); a JobMaster failover will restart this job from scratch`);
            },
          }),
          this.clock,
        )
      : undefined;
    const recoveries = await this.loadRecoveries(graph.job_id);
    const partitionReadCapability = await this.readCapability(graph.job_id);
    const job = new JobMaster(graph, operators, {
      epoch: this.epoch,
      jobmasterId: this.jobmasterId,
      address: this.address,
      config: this.config,
      registry: this.registry,
      gateway: this.gateway,
      logger: this.logger,
      clock: this.clock,
      events,
      crashPoints: this.crashPoints,
      electedAtMs: this.electedAtMs,
      previousLeaderLastHeardMs: this.previousLeaderLastHeardMs,
      recoveries,
      partitionReadCapability,
      saveRecoveries: (jobId, reports) => this.store.putJobAttachment(jobId, RECOVERIES, JSON.stringify(reports)),
      saveCommitManifest: async (jobId, manifest) => {
        await this.store.putJobAttachment(jobId, COMMIT_MANIFEST, JSON.stringify(manifest));
        await this.crashPoints?.inCommit(manifest);
      },
      onTerminal: (j) => this.onJobTerminal(j),
      onSlotsFreed: () => this.scheduleAll(),
    });
    if (takeover) {
      this.logger.info({ jobId: graph.job_id, name: graph.name, recoveryEnabled }, 'taking over an unfinished job');
      if (!recoveryEnabled) job.notes.push('JobMaster failover: restarted from scratch (execution.batch.job-recovery.enabled is false)');
    }
    this.jobs.set(graph.job_id, job);
    await job.start(takeover);
  }

  /** The job's partition read capability, made and stored on first use. */
  private async readCapability(jobId: string): Promise<string> {
    const stored = await this.store.getJobAttachment(jobId, READ_CAPABILITY_ATTACHMENT);
    if (stored && stored.length > 0) return Buffer.from(stored).toString('utf8');
    const made = newReadCapability();
    await this.store.putJobAttachment(jobId, READ_CAPABILITY_ATTACHMENT, made);
    return made;
  }

  private async loadRecoveries(jobId: string): Promise<RecoveryReport[]> {
    const raw = await this.store.getJobAttachment(jobId, RECOVERIES).catch(() => undefined);
    if (!raw) return [];
    try {
      return JSON.parse(Buffer.from(raw).toString('utf8')) as RecoveryReport[];
    } catch {
      return [];
    }
  }

  private async onJobTerminal(job: JobMaster): Promise<void> {
    if (this.closed) return;
    const status = job.status();
    try {
      await this.store.putJobAttachment(job.jobId, FINAL_STATUS, encodeMessage('JobStatus', status));
      const history = job.exceptionHistory.snapshot();
      if (history.entries.length > 0) await this.store.putJobAttachment(job.jobId, EXCEPTIONS, JSON.stringify(history));
      await this.store.markTerminal(job.jobId, {
        state: job.state as 'FINISHED' | 'FAILED' | 'CANCELED',
        finishedAtMs: job.finishedAtMs,
        ...(job.failure ? { failure: job.failure } : {}),
      });
    } catch (err) {
      this.logger.error({ jobId: job.jobId, err: errorMessage(err) }, 'cannot record the terminal state of a job');
    }
    this.jobs.delete(job.jobId);
    for (const tm of this.registry.all()) {
      this.gateway
        .disconnectJob(tm, { epoch: this.epoch, job_id: job.jobId, release_partitions: true })
        .catch((err: unknown) => this.logger.warn({ taskManagerId: tm.id, err: errorMessage(err) }, 'DisconnectJob failed'));
    }
  }

  private scheduleAll(): void {
    for (const job of this.jobs.values()) job.schedule();
  }

  private liveJob(jobId: string): JobMaster | undefined {
    return this.jobs.get(jobId);
  }

  async status(jobId: string): Promise<JobStatus> {
    const live = this.liveJob(jobId);
    if (live) return live.status();
    const final = await this.store.getJobAttachment(jobId, FINAL_STATUS).catch(() => undefined);
    if (final) return decodeMessage<JobStatus__Output>('JobStatus', final);
    const terminal = await this.store.getTerminalStatus(jobId).catch(() => undefined);
    if (terminal) {
      const { graph } = await this.store.getJob(jobId);
      return { job_id: jobId, name: graph.name, state: terminal.state, failure: terminal.failure ?? '', finished_at_ms: terminal.finishedAtMs, vertices: [] };
    }
    if (await this.store.hasJob(jobId)) {
      // Stored and unfinished, but this new leader has not taken it over yet (it is still loading
      // the job module, or taking over other jobs first): known, not lost.
      const { graph } = await this.store.getJob(jobId);
      return { job_id: jobId, name: graph.name, state: 'CREATED', submitted_at_ms: graph.submitted_at_ms, leader_epoch: this.epoch, vertices: [] };
    }
    throw new JobNotFoundError(jobId);
  }

  async list(): Promise<JobSummary[]> {
    const out: JobSummary[] = [];
    for (const s of await this.store.listJobs()) {
      const live = this.liveJob(s.jobId);
      let total = 0;
      let finished = 0;
      if (live) {
        for (const ev of live.graph.allExecutionVertices()) {
          total++;
          if (ev.state === 'FINISHED') finished++;
        }
      } else if (s.status) {
        // A terminal job's tasks are in its final status (a job listed 0/0 looked like it never ran).
        const final = await this.store.getJobAttachment(s.jobId, FINAL_STATUS).catch(() => undefined);
        for (const v of final ? decodeMessage<JobStatus__Output>('JobStatus', final).vertices : []) {
          total += v.parallelism;
          finished += v.tasks?.finished ?? 0;
        }
      }
      if (s.damage) {
        out.push({ job_id: s.jobId, name: s.name, state: 'DAMAGED', error: s.damage });
        continue;
      }
      out.push({
        job_id: s.jobId,
        name: s.name,
        state: live ? live.status().state : (s.status?.state ?? 'CREATED'),
        submitted_at_ms: s.submittedAtMs,
        finished_at_ms: s.status?.finishedAtMs ?? 0,
        tasks_total: total,
        tasks_finished: finished,
      });
    }
    return out;
  }

  async cancel(jobId: string): Promise<string> {
    const live = this.liveJob(jobId);
    if (live) {
      await live.cancel();
      return live.state;
    }
    return (await this.status(jobId)).state ?? 'UNKNOWN';
  }

  job(jobId: string): JobMaster {
    const job = this.liveJob(jobId);
    if (!job) throw new JobNotFoundError(jobId);
    return job;
  }

  /** A TaskManager's UpdateTaskExecutionState: only from the TaskManager that holds the execution. */
  onTaskExecutionState(update: TaskExecutionState__Output): void {
    const job = this.liveJob(update.execution?.job_id ?? '');
    authorizeExecutionCall(this.registry, job, update, 'UpdateTaskExecutionState', this.logger);
    job?.onTaskExecutionState(update);
  }

  /** A source reader's RequestSplit: only from the TaskManager that runs the reader. */
  requestSplit(req: SplitRequest__Output): SplitResponse {
    const job = this.job(req.execution?.job_id ?? '');
    authorizeExecutionCall(this.registry, job, req, 'RequestSplit', this.logger);
    return job.requestSplit(req);
  }

  /** A task's request to a user coordinator: only from the TaskManager that runs the task. */
  handleCoordinationRequest(req: CoordinationRequest__Output): Promise<CoordinationResponse> {
    const job = this.job(req.execution?.job_id ?? '');
    authorizeExecutionCall(this.registry, job, req, 'SendCoordinationRequest', this.logger);
    return job.handleCoordinationRequest(req);
  }

  /** A job's module bundle, for a registered TaskManager (with its session) only. */
  async fetchArtifact(req: FetchJobArtifactRequest__Output): Promise<{ bytes: Buffer; digest: string }> {
    this.registry.authenticate(req.task_manager_id, req.session_id, 'FetchJobArtifact');
    return this.moduleBundle(req.job_id);
  }

  async moduleBundle(jobId: string): Promise<{ bytes: Buffer; digest: string }> {
    const { graph, modulePath } = await this.store.getJob(jobId);
    return { bytes: await readFile(modulePath), digest: graph.module_digest };
  }

  /** The job's task failures: live from its JobMaster, or as stored when it ended. */
  async exceptionHistory(jobId: string): Promise<ExceptionHistorySnapshot> {
    const live = this.liveJob(jobId);
    if (live) return live.exceptionHistory.snapshot();
    const raw = await this.store.getJobAttachment(jobId, EXCEPTIONS).catch(() => undefined);
    return raw ? ExceptionHistory.parse(raw) : { entries: [], truncated: false };
  }

  graphOf(jobId: string): JobGraph__Output | undefined {
    return this.liveJob(jobId)?.jobGraph;
  }

  /** When this leadership began. */
  get electedAt(): number {
    return this.electedAtMs;
  }

  /** Ids of the jobs this leader runs now. */
  liveJobIds(): string[] {
    return [...this.jobs.keys()];
  }

  /** Finished result partitions (of producers) this leader tracks, per TaskManager. */
  trackedPartitions(): Map<string, { partitions: number; bytes: number }> {
    const out = new Map<string, { partitions: number; bytes: number }>();
    for (const job of this.jobs.values()) {
      for (const ev of job.graph.allExecutionVertices()) {
        const tmId = ev.location?.task_manager_id;
        if (ev.state !== 'FINISHED' || !tmId || ev.jobVertex.consumers.length === 0) continue;
        const e = out.get(tmId) ?? { partitions: 0, bytes: 0 };
        e.partitions++;
        e.bytes += Number(ev.ioMetrics?.bytes_out ?? 0);
        out.set(tmId, e);
      }
    }
    return out;
  }

  /** Leadership lost: stop everything without touching TaskManagers or stored jobs. */
  async close(): Promise<void> {
    this.closed = true;
    this.expiry.stop();
    for (const job of this.jobs.values()) await job.suspend();
    this.jobs.clear();
    this.registry.close();
  }
}
