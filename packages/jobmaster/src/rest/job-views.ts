import {
  ErrorCode,
  JobNotFoundError,
  ReboundError,
  isJobId,
  type Clock,
  type Configuration,
  type JobGraph__Output,
} from '@rebound/core';
import { dumpJobEvents, formatEventLine } from '@rebound/event-store';
import type { JobGraphStore } from '@rebound/ha';
import { JobRecords } from '../job-records.js';
import {
  clusterOverview,
  jobDetailsInfo,
  jobDetailsOverview,
  jobExceptions,
  jobSummaryOverview,
  recoveryTimeline,
  taskManagerInfo,
} from './flink-json.js';
import type { JobsSource, LeaderView } from './leader-view.js';

export class BadRequestError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.JOB_INVALID, message);
  }
}

/** Normalizes a job id from a path, or throws a 400 naming the bad value. */
export function parseJobId(raw: string): string {
  const id = raw.trim().toLowerCase();
  if (!isJobId(id)) throw new BadRequestError(`'${raw.slice(0, 64)}' is not a job id (32 hex characters)`);
  return id;
}

/** A non-negative integer query parameter within [min, max], or the default. */
export function intParam(query: Record<string, unknown>, name: string, def: number, min: number, max: number): number {
  const raw = query[name];
  if (raw === undefined || raw === '') return def;
  if (typeof raw !== 'string' || !/^\d+$/.test(raw))
    throw new BadRequestError(`query parameter '${name}' must be an integer from ${min} to ${max}`);
  const v = Number(raw);
  if (v < min || v > max)
    throw new BadRequestError(`query parameter '${name}' must be an integer from ${min} to ${max}`);
  return v;
}

/**
 * The JSON documents of the REST API, computed from the leader (live jobs) or, with no leader
 * to answer, the HA store, and from the HA directory (stored jobs, recovery reports, event logs). Shared by the routes and the live stream.
 */
export class JobViews {
  readonly store: JobGraphStore;
  private readonly records: JobRecords;
  private readonly graphs = new Map<string, JobGraph__Output>();
  private readonly defaultMaxParallelism: number;

  constructor(
    /** Where the job event logs are (the HA services' storageDir). */
    readonly haDir: string,
    store: JobGraphStore,
    config: Configuration,
    private readonly clock: Clock,
  ) {
    this.store = store;
    this.records = new JobRecords(store);
    this.defaultMaxParallelism = config.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism');
  }

  /** Job graphs never change once stored: read each once. */
  private async graph(source: JobsSource, jobId: string): Promise<JobGraph__Output | undefined> {
    const live = source.graphOf(jobId);
    if (live) return live;
    const cached = this.graphs.get(jobId);
    if (cached) return cached;
    const stored = await this.store.getJob(jobId).then(
      (j) => j.graph,
      () => undefined,
    );
    if (stored) this.graphs.set(jobId, stored);
    return stored;
  }

  async overview(source: JobsSource): Promise<Record<string, unknown>> {
    const jobs = await source.list();
    return clusterOverview(
      source.registry.overview(),
      jobs.map((j) => j.state ?? 'CREATED'),
    );
  }

  async jobsOverview(source: JobsSource): Promise<Record<string, unknown>> {
    const now = this.clock.now();
    const live = new Set(source.liveJobIds());
    const jobs = [];
    for (const s of await source.list()) {
      const id = s.job_id ?? '';
      // Live jobs carry per-state task counts; stored ones their final status (or only a summary).
      const status = live.has(id) || s.state !== 'CREATED' ? await source.status(id).catch(() => undefined) : undefined;
      jobs.push(status ? jobDetailsOverview(status, now) : jobSummaryOverview(s, now));
    }
    jobs.sort((a, b) => Number(b['start-time']) - Number(a['start-time']));
    return { jobs };
  }

  async jobIds(source: JobsSource): Promise<Record<string, unknown>> {
    return { jobs: (await source.list()).map((j) => ({ id: j.job_id, status: j.state })) };
  }

  async job(source: JobsSource, jobId: string): Promise<Record<string, unknown>> {
    const status = await source.status(jobId);
    return jobDetailsInfo(status, await this.graph(source, jobId), this.clock.now(), this.defaultMaxParallelism);
  }

  async exceptions(source: JobsSource, jobId: string): Promise<Record<string, unknown>> {
    return jobExceptions(await source.status(jobId), await source.exceptionHistory(jobId));
  }

  taskManagers(source: JobsSource): Record<string, unknown> {
    return { taskmanagers: source.registry.overview().map(taskManagerInfo) };
  }

  private async requireStored(jobId: string): Promise<void> {
    if (!(await this.store.hasJob(jobId))) throw new JobNotFoundError(jobId);
  }

  /** Recovery reports from the HA directory (any JobMaster can answer), plus one in progress. */
  async recoveries(jobId: string, leader: LeaderView | undefined): Promise<Record<string, unknown>> {
    await this.requireStored(jobId);
    const { reports, damage } = await this.records.recoveries(jobId);
    let inProgress: Record<string, unknown> | null = null;
    if (leader && leader.liveJobIds().includes(jobId)) {
      const status = await leader.status(jobId).catch(() => undefined);
      if (status?.state === 'RECONCILING')
        inProgress = { epoch: leader.epoch, electedAtMs: leader.electedAt, state: 'RECONCILING' };
    }
    return { jid: jobId, recoveries: reports.map(recoveryTimeline), inProgress, ...(damage ? { damage } : {}) };
  }

  /** A page of the job's event log, read from disk (works with no leader at all). */
  async events(jobId: string, offset: number, limit: number): Promise<Record<string, unknown>> {
    await this.requireStored(jobId);
    const dump = await dumpJobEvents(this.haDir, jobId);
    const page = dump.events.slice(offset, offset + limit).map((r, i) => ({
      index: offset + i,
      type: r.type,
      epoch: r.epoch,
      writtenAtMs: r.writtenAtMs,
      file: r.file,
      offset: r.offset,
      line: formatEventLine(r),
    }));
    const { fileDetails: _files, staleFiles: _stale, ...summary } = dump.summary;
    return { jid: jobId, total: dump.events.length, offset, limit, events: page, summary };
  }
}
