import {
  JobNotFoundError,
  PeriodicTask,
  errorMessage,
  IllegalStateError,
  JobInvalidError,
  InvalidArgumentError,
} from '@rebound/core';
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

  constructor(private readonly opts: DispatcherOptions) {
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
    const { store, records, runner, epoch } = this.opts;
    const live = runner.get(jobId);
    if (live) return live.status();
    const final = await records.finalStatus(jobId);
    if (final) return final;
    const terminal = await store.getTerminalStatus(jobId).catch(() => undefined);
    if (terminal) {
      // No final status: a leader ended the job for a predecessor (it completed the commit the
      // one before it started). The failovers the job went through are still its history.
      const { graph } = await store.getJob(jobId);
      return {
        job_id: jobId,
        name: graph.name,
        state: terminal.state,
        failure: terminal.failure ?? '',
        finished_at_ms: terminal.finishedAtMs,
        vertices: [],
        recoveries: (await records.recoveries(jobId)).reports,
      };
    }
    if (await store.hasJob(jobId)) {
      // Stored and unfinished, but this new leader has not taken it over yet (it is still loading
      // the job module, or taking over other jobs first): known, not lost.
      const { graph } = await store.getJob(jobId);
      return {
        job_id: jobId,
        name: graph.name,
        state: 'CREATED',
        submitted_at_ms: graph.submitted_at_ms,
        leader_epoch: epoch,
        vertices: [],
      };
    }
    throw new JobNotFoundError(jobId);
  }

  async list(): Promise<JobSummary[]> {
    const { store, records, runner } = this.opts;
    const out: JobSummary[] = [];
    for (const s of await store.listJobs()) {
      const live = runner.get(s.jobId);
      let total = 0;
      let finished = 0;
      if (live) {
        for (const ev of live.graph.allExecutionVertices()) {
          total++;
          if (ev.state === 'FINISHED') finished++;
        }
      } else if (s.status) {
        // A terminal job's tasks are in its final status (a job listed 0/0 looked like it never ran).
        for (const v of (await records.finalStatus(s.jobId))?.vertices ?? []) {
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
