import { PeriodicTask, errorMessage, IllegalStateError, JobInvalidError, InvalidArgumentError } from '@rebound/core';
import type {
  Clock,
  Configuration,
  FetchJobResultRequest__Output,
  JobResultChunk,
  JobStatus,
  JobSummary,
  Logger,
  SubmitJobRequest__Output,
} from '@rebound/core';
import type { JobGraphStore } from '@rebound/ha';
import { readResultChunks, resultFilesOf, withCollectDir } from '../collect-result.js';
import type { ExceptionHistorySnapshot } from '../exception-history.js';
import type { JobRecords } from '../job-records.js';
import type { JobRunner } from '../job-runner.js';
import { StoredJobs } from '../stored-jobs.js';

/** What a Dispatcher needs from the leadership it serves clients for. */
export interface DispatcherOptions {
  readonly epoch: number;
  /** The job store of this leadership (writes fenced by its epoch). */
  readonly store: JobGraphStore;
  readonly records: JobRecords;
  /** Starts submitted jobs and holds the running ones. */
  readonly runner: Pick<JobRunner, 'get' | 'has' | 'start'>;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Where jobs' files live (`<storageDir>/jobs/<jobId>/`): a collect() sink writes there. */
  readonly storageDir: string;
}

/**
 * Flink's Dispatcher, for one leadership: submit, list, status and cancel of jobs, live from
 * their JobMaster or as stored, and the removal of finished jobs once they expire.
 */
export class Dispatcher {
  private readonly expiry: PeriodicTask;
  private readonly stored: StoredJobs;

  constructor(private readonly opts: DispatcherOptions) {
    this.stored = new StoredJobs(opts.store, opts.records);
    // A job is removed between one and two sweeps after it expires; a minute at most keeps the
    // HA directory small without a key of its own.
    const retentionMs = opts.config.getDurationMs('jobstore.expiration-time');
    this.expiry = new PeriodicTask(
      Math.max(1_000, Math.min(retentionMs, 60_000)),
      () => this.removeExpiredJobs(),
      (err) => opts.logger.warn({ err: errorMessage(err) }, 'could not remove expired jobs'),
    );
  }

  start(): void {
    this.expiry.start(true);
  }

  close(): void {
    this.expiry.stop();
  }

  /** Removes terminal jobs older than `jobstore.expiration-time` from the HA directory. */
  private async removeExpiredJobs(): Promise<void> {
    const { store, clock, config, logger } = this.opts;
    const removed = await store.removeExpiredJobs(clock.now(), config.getDurationMs('jobstore.expiration-time'));
    if (removed.length > 0)
      logger.info({ jobIds: removed }, `removed ${removed.length} expired finished job(s) from the HA directory`);
  }

  async submit(req: SubmitJobRequest__Output): Promise<string> {
    const { store, runner } = this.opts;
    if (!req.job_graph || !req.job_graph.job_id) throw new JobInvalidError('submission without a job graph or job id');
    const graph = withCollectDir(req.job_graph, this.opts.storageDir);
    if (runner.has(graph.job_id) || (await store.hasJob(graph.job_id))) {
      throw new JobInvalidError(`job ${graph.job_id} was already submitted`);
    }
    await store.putJob(graph, req.module_bundle);
    await runner.start(graph, false);
    return graph.job_id;
  }

  async status(jobId: string): Promise<JobStatus> {
    const live = this.opts.runner.get(jobId);
    if (live) return live.status();
    // Stored and unfinished, but this new leader has not taken it over yet (it is still loading
    // the job module, or taking over other jobs first): known, not lost.
    return this.stored.status(jobId, { state: 'CREATED', leader_epoch: this.opts.epoch });
  }

  async list(): Promise<JobSummary[]> {
    return this.stored.list((jobId) => {
      const live = this.opts.runner.get(jobId);
      if (!live) return undefined;
      let tasksTotal = 0;
      let tasksFinished = 0;
      for (const ev of live.graph.allExecutionVertices()) {
        tasksTotal++;
        if (ev.state === 'FINISHED') tasksFinished++;
      }
      return { state: live.status().state ?? 'CREATED', tasksTotal, tasksFinished };
    }, 'CREATED');
  }

  async cancel(jobId: string): Promise<string> {
    const live = this.opts.runner.get(jobId);
    if (live) {
      await live.cancel();
      return live.state;
    }
    return (await this.status(jobId)).state ?? 'UNKNOWN';
  }

  /**
   * The committed collect() result of a FINISHED job from `req`'s position on (see
   * readResultChunks). Before FINISHED there is nothing committed to stream: one clear error.
   */
  async resultChunks(req: FetchJobResultRequest__Output): Promise<AsyncGenerator<JobResultChunk>> {
    const jobId = req.job_id;
    if (!jobId) throw new InvalidArgumentError('FetchJobResult without a job id');
    const status = await this.status(jobId);
    if (status.state !== 'FINISHED') {
      const why = status.state === 'FAILED' || status.state === 'CANCELED' ? 'it has no result' : 'wait until it has';
      throw new IllegalStateError(
        `job ${jobId} is ${status.state ?? 'UNKNOWN'}: a collect() result is streamed once the job FINISHED; ${why}`,
      );
    }
    const { graph } = await this.opts.store.getJob(jobId);
    const files = await resultFilesOf(graph);
    return readResultChunks(jobId, files, { fileIndex: req.file_index, offset: req.offset }, req.max_chunk_bytes);
  }

  /** The job's task failures: live from its JobMaster, or as stored when it ended. */
  async exceptionHistory(jobId: string): Promise<ExceptionHistorySnapshot> {
    const live = this.opts.runner.get(jobId);
    if (live) return live.exceptionHistory.snapshot();
    return this.opts.records.exceptions(jobId);
  }
}
