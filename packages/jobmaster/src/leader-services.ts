import { readFile } from 'node:fs/promises';
import { ErrorCode, JobNotFoundError, ReboundError, decodeMessage, encodeMessage, errorMessage } from '@rebound/core';
import type {
  Clock,
  Configuration,
  JobGraph__Output,
  JobStatus,
  JobStatus__Output,
  JobSummary,
  Logger,
  RecoveryReport,
  SubmitJobRequest__Output,
  TaskExecutionState__Output,
} from '@rebound/core';
import { buildJob, loadJobModule } from '@rebound/api';
import { FileSystemJobEventStore, JobEventManager } from '@rebound/event-store';
import { JobGraphStore, readCurrentEpoch } from '@rebound/ha';
import { CrashPoints } from './crash-points.js';
import { JobMaster } from './job-master.js';
import { applyCommit, type CommitManifest } from './sink-committer.js';
import { TaskManagerRegistry } from './task-manager-registry.js';

const COMMIT_MANIFEST = 'commit.json';
const FINAL_STATUS = 'final-status.pb';
const RECOVERIES = 'recoveries.json';

/**
 * Everything that exists only while this process leads: the TaskManager registry and a
 * JobMaster per running job. Created on grantLeadership, closed on revokeLeadership.
 */
export class LeaderServices {
  readonly registry: TaskManagerRegistry;
  private readonly jobs = new Map<string, JobMaster>();
  private readonly store: JobGraphStore;
  private closed = false;
  private readonly electedAtMs: number;
  private readonly crashPoints: CrashPoints | undefined;

  constructor(
    readonly epoch: number,
    private readonly jobmasterId: string,
    private readonly address: string,
    private readonly haDir: string,
    private readonly config: Configuration,
    private readonly logger: Logger,
    private readonly clock: Clock,
    /** When the previous leader last renewed its lease (if this leadership took over an expired one). */
    private readonly previousLeaderLastHeardMs?: number,
  ) {
    this.store = new JobGraphStore(haDir);
    this.electedAtMs = clock.now();
    this.crashPoints = CrashPoints.from(config, logger);
    this.registry = new TaskManagerRegistry(
      epoch,
      jobmasterId,
      config,
      {
        onTaskManagerRegistered: (tm, retained) => {
          for (const job of this.jobs.values()) job.onTaskManagerRegistered(tm, retained);
          this.scheduleAll();
        },
        onTaskManagerLost: (tmId, reason) => {
          for (const job of this.jobs.values()) job.onTaskManagerLost(tmId, reason);
          this.scheduleAll();
        },
      },
      logger.child({ component: 'TaskManagerRegistry' }),
      clock,
    );
  }

  async start(): Promise<void> {
    this.registry.start();
    await this.recoverJobs();
  }

  /** Takes over every job a previous leader left unfinished. */
  private async recoverJobs(): Promise<void> {
    for (const summary of await this.store.listJobs()) {
      if (summary.status) continue;
      const jobId = summary.jobId;
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
    await this.runJob(graph, false);
    return graph.job_id;
  }

  private async runJob(graph: JobGraph__Output, takeover: boolean): Promise<void> {
    const { modulePath } = await this.store.getJob(graph.job_id);
    let operators;
    try {
      const def = await loadJobModule(modulePath);
      operators = (await buildJob(def, graph.job_args, { cwd: graph.working_directory || undefined })).operators;
    } catch (err) {
      throw new ReboundError(ErrorCode.JOB_MODULE_INVALID, `job ${graph.job_id}: cannot build the job module on the JobMaster: ${errorMessage(err)}`);
    }
    const jobConfig = this.config.with(graph.config);
    const recoveryEnabled = jobConfig.getBoolean('execution.batch.job-recovery.enabled');
    const logger = this.logger.child({ jobId: graph.job_id });
    const events = recoveryEnabled
      ? new JobEventManager(
          new FileSystemJobEventStore({
            haDir: this.haDir,
            jobId: graph.job_id,
            epoch: this.epoch,
            jobMasterId: this.jobmasterId,
            currentLeaderEpoch: () => readCurrentEpoch(this.haDir),
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
    const job = new JobMaster(graph, operators, {
      epoch: this.epoch,
      jobmasterId: this.jobmasterId,
      address: this.address,
      config: this.config,
      registry: this.registry,
      logger: this.logger,
      clock: this.clock,
      events,
      crashPoints: this.crashPoints,
      electedAtMs: this.electedAtMs,
      previousLeaderLastHeardMs: this.previousLeaderLastHeardMs,
      recoveries,
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
      this.registry
        .call(tm, (c) => c.DisconnectJob, { epoch: this.epoch, job_id: job.jobId, release_partitions: true })
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

  onTaskExecutionState(update: TaskExecutionState__Output): void {
    const jobId = update.execution?.job_id ?? '';
    this.liveJob(jobId)?.onTaskExecutionState(update);
  }

  async moduleBundle(jobId: string): Promise<{ bytes: Buffer; digest: string }> {
    const { graph, modulePath } = await this.store.getJob(jobId);
    return { bytes: await readFile(modulePath), digest: graph.module_digest };
  }

  graphOf(jobId: string): JobGraph__Output | undefined {
    return this.liveJob(jobId)?.jobGraph;
  }

  /** Leadership lost: stop everything without touching TaskManagers or stored jobs. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.jobs.values()) await job.suspend();
    this.jobs.clear();
    this.registry.close();
  }
}
