import { join } from 'node:path';
import {
  ErrorCode,
  errorMessage,
  HaDirInvalidError,
  IllegalStateError,
  isTerminalJobState,
  type JobGraph,
  JobInvalidError,
  JobNotFoundError,
  ReboundError,
  writeFileAtomic,
} from '@rebound/core';
import { HaPaths, TMP_MARKER } from './file/ha-dir.js';
import type { JobGraphStore, StoredJob, StoredJobSummary, TerminalJobStatus } from './ha-services.js';
import type { JobRecordDriver } from './job-record-driver.js';

export const JOB_GRAPH_FILE = 'jobgraph.pb';
export const JOB_MODULE_FILE = 'module.mjs';
export const JOB_STATUS_FILE = 'status.json';
export const JOB_EVENTS_DIR = 'job-events';

// Declared with the JobGraphStore interface in ha-services.ts, which must not import this file;
// the package index and the etcd store take them from here.
export type { StoredJob, StoredJobSummary, TerminalJobStatus };

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** A job id or attachment name usable as a file name and a key segment. */
export function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name) && !name.includes(TMP_MARKER);
}

export function checkJobId(jobId: string): void {
  if (!isSafeName(jobId)) {
    throw new JobInvalidError(
      `job id '${jobId}' is not usable as a directory name; use letters, digits, '-', '_' or '.'`,
    );
  }
}

/** The stored form of a terminal status (both backends); refuses a state that is not terminal. */
export function encodeTerminalStatus(status: TerminalJobStatus): string {
  if (!isTerminalJobState(status.state)) {
    throw new IllegalStateError(`'${status.state}' is not a terminal job state`);
  }
  const record: TerminalJobStatus = {
    state: status.state,
    finishedAtMs: status.finishedAtMs,
    ...(status.failure !== undefined ? { failure: status.failure } : {}),
  };
  return `${JSON.stringify(record)}\n`;
}

/** Reads what encodeTerminalStatus wrote; `where` (a file or key) names it in the error. */
export function decodeTerminalStatus(text: string, where: string): TerminalJobStatus {
  let o: Partial<TerminalJobStatus>;
  try {
    o = JSON.parse(text) as Partial<TerminalJobStatus>;
  } catch {
    throw new HaDirInvalidError(`${where} is not valid JSON`);
  }
  if (
    typeof o !== 'object' ||
    o === null ||
    typeof o.state !== 'string' ||
    !isTerminalJobState(o.state) ||
    typeof o.finishedAtMs !== 'number'
  ) {
    throw new HaDirInvalidError(`${where} is not a terminal job status`);
  }
  return {
    state: o.state,
    finishedAtMs: o.finishedAtMs,
    ...(typeof o.failure === 'string' ? { failure: o.failure } : {}),
  };
}

function checkAttachmentName(name: string): void {
  if (!isSafeName(name)) {
    throw new IllegalStateError(`job attachment name '${name}' is not a plain file name`);
  }
}

/**
 * Submitted jobs, so that a new leader can take them over (Flink's JobGraphStore), over a
 * JobRecordDriver. The job module is a file in `<storageDir>/jobs/<jobId>/` on every backend,
 * written before the graph record: a job exists once its graph does, so a submission cut short
 * by a crash is never reported as a job.
 */
export class DefaultJobGraphStore implements JobGraphStore {
  constructor(
    private readonly storageDir: string,
    private readonly driver: JobRecordDriver,
  ) {}

  /** Directory of one job: its module, and its JobEventStore files (`job-events/`). */
  jobDir(jobId: string): string {
    checkJobId(jobId);
    return HaPaths.jobDir(this.storageDir, jobId);
  }

  /** Persists a submitted job. Resolves only once module and graph are durable. */
  async putJob(graph: JobGraph, moduleBundle: Uint8Array): Promise<void> {
    const jobId = graph.job_id ?? '';
    await writeFileAtomic(join(this.jobDir(jobId), JOB_MODULE_FILE), moduleBundle);
    await this.driver.put(jobId, 'graph', this.driver.encodeGraph(graph), 'storing the job graph');
  }

  async hasJob(jobId: string): Promise<boolean> {
    if (!isSafeName(jobId)) return false;
    return this.driver.has(jobId, 'graph');
  }

  async getJob(jobId: string): Promise<StoredJob> {
    if (!isSafeName(jobId)) throw new JobNotFoundError(jobId);
    const bytes = await this.driver.get(jobId, 'graph');
    if (!bytes) throw new JobNotFoundError(jobId);
    return { graph: this.driver.decodeGraph(jobId, bytes), modulePath: join(this.jobDir(jobId), JOB_MODULE_FILE) };
  }

  /** Ids of all stored jobs, terminal or not, sorted. */
  listJobIds(): Promise<string[]> {
    return this.driver.jobIds();
  }

  /** Records that a job reached a globally terminal state, so no leader runs it again. */
  async markTerminal(jobId: string, status: TerminalJobStatus): Promise<void> {
    const record = encodeTerminalStatus(status);
    await this.requireJob(jobId);
    await this.driver.put(jobId, 'status', record, 'recording the terminal status');
  }

  async getTerminalStatus(jobId: string): Promise<TerminalJobStatus | undefined> {
    await this.requireJob(jobId);
    const bytes = await this.driver.get(jobId, 'status');
    if (!bytes) return undefined;
    return decodeTerminalStatus(Buffer.from(bytes).toString('utf8'), this.driver.nameOf(jobId, 'status'));
  }

  /**
   * Every stored job with its terminal status, oldest submission first. A job whose records cannot
   * be read is listed with the reason (`damage`) instead of failing the whole listing.
   */
  async listJobs(): Promise<StoredJobSummary[]> {
    const jobs: StoredJobSummary[] = [];
    for (const jobId of await this.listJobIds()) {
      try {
        const { graph } = await this.getJob(jobId);
        jobs.push({
          jobId,
          name: graph.name,
          submittedAtMs: graph.submitted_at_ms,
          status: await this.getTerminalStatus(jobId),
        });
      } catch (err) {
        // Removed since it was listed.
        if (err instanceof JobNotFoundError) continue;
        // A backend being unreachable is not damage: the whole listing fails instead.
        if (err instanceof ReboundError && err.code === ErrorCode.UNAVAILABLE) throw err;
        jobs.push({ jobId, name: '', submittedAtMs: 0, status: undefined, damage: this.damageOf(jobId, err) });
      }
    }
    return jobs.sort((a, b) => a.submittedAtMs - b.submittedAtMs || a.jobId.localeCompare(b.jobId));
  }

  /**
   * Jobs a new leader must take over: stored and without a terminal status. Terminal jobs are
   * recognised by the status record alone, so a takeover never decodes every job ever submitted.
   * A job whose status cannot be read is returned with `damage` set and must be skipped.
   */
  async listUnfinishedJobs(): Promise<{ readonly jobId: string; readonly damage?: string }[]> {
    if (this.driver.unfinishedJobIds) return (await this.driver.unfinishedJobIds()).map((jobId) => ({ jobId }));
    const out: { jobId: string; damage?: string }[] = [];
    for (const jobId of await this.listJobIds()) {
      try {
        if (!(await this.getTerminalStatus(jobId))) out.push({ jobId });
      } catch (err) {
        if (err instanceof JobNotFoundError) continue;
        out.push({ jobId, damage: this.damageOf(jobId, err) });
      }
    }
    return out;
  }

  /**
   * Removes every terminal job that ended at least `retentionMs` before `nowMs`: its graph, module,
   * status, attachments and event log. Damaged and unfinished jobs are kept. Returns the ids removed.
   */
  async removeExpiredJobs(nowMs: number, retentionMs: number): Promise<string[]> {
    const removed: string[] = [];
    for (const jobId of await this.listJobIds()) {
      const status = await this.getTerminalStatus(jobId).catch(() => undefined);
      if (!status || status.finishedAtMs + retentionMs > nowMs) continue;
      await this.driver.remove(jobId);
      removed.push(jobId);
    }
    return removed;
  }

  /** Stores a small record with the job (e.g. a recovery report), atomically. */
  async putJobAttachment(jobId: string, name: string, data: string | Uint8Array): Promise<void> {
    checkAttachmentName(name);
    await this.requireJob(jobId);
    await this.driver.put(jobId, `attachments/${name}`, data, 'storing the job attachment');
  }

  /** The attachment's bytes, or undefined when it was never written. */
  async getJobAttachment(jobId: string, name: string): Promise<Uint8Array | undefined> {
    checkAttachmentName(name);
    await this.requireJob(jobId);
    const bytes = await this.driver.get(jobId, `attachments/${name}`);
    return bytes ? new Uint8Array(bytes) : undefined;
  }

  /** Names of the job's attachments, sorted. */
  async listJobAttachments(jobId: string): Promise<string[]> {
    await this.requireJob(jobId);
    return this.driver.listAttachments(jobId);
  }

  private damageOf(jobId: string, err: unknown): string {
    return `stored ${this.driver.recordKind} of this job cannot be read (${errorMessage(err)}); it is not run or recovered: inspect or remove ${this.driver.where(jobId)}`;
  }

  private async requireJob(jobId: string): Promise<void> {
    if (!(await this.hasJob(jobId))) throw new JobNotFoundError(jobId);
  }
}
