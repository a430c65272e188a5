import { readdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  errorMessage,
  ErrorCode,
  isTerminalJobState,
  type JobGraph,
  type JobGraph__Output,
  JobNotFoundError,
  ReboundError,
  type TerminalJobState,
  writeFileAtomic,
} from '@rebound/core';
import { HaPaths, isErrno, TMP_MARKER } from './ha-dir.js';
import type { JobGraphStore } from './ha-services.js';
import { decodeJobGraphFile, encodeJobGraphFile } from './job-graph-file.js';

export const JOB_GRAPH_FILE = 'jobgraph.pb';
export const JOB_MODULE_FILE = 'module.mjs';
export const JOB_STATUS_FILE = 'status.json';
export const JOB_EVENTS_DIR = 'job-events';
const ATTACHMENTS_DIR = 'attachments';

/** Contents of `<ha>/jobs/<jobId>/status.json`. */
export interface TerminalJobStatus {
  readonly state: TerminalJobState;
  readonly finishedAtMs: number;
  readonly failure?: string;
}

export interface StoredJob {
  readonly graph: JobGraph__Output;
  /** Absolute path of the bundled job module, importable as is. */
  readonly modulePath: string;
}

export interface StoredJobSummary {
  readonly jobId: string;
  readonly name: string;
  readonly submittedAtMs: number;
  /** Undefined while the job has not reached a terminal state (it is to be run or recovered). */
  readonly status: TerminalJobStatus | undefined;
  /**
   * Why the job's stored files cannot be read (then name and status are unknown). Such a job is
   * listed so that someone can look at it, and never run, recovered or removed automatically.
   */
  readonly damage?: string;
}

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

function isSafeName(name: string): boolean {
  return SAFE_NAME.test(name) && !name.includes(TMP_MARKER);
}

function checkJobId(jobId: string): void {
  if (!isSafeName(jobId)) {
    throw new ReboundError(ErrorCode.JOB_INVALID, `job id '${jobId}' is not usable as a directory name; use letters, digits, '-', '_' or '.'`);
  }
}

/** The stored form of a terminal status (both backends); refuses a state that is not terminal. */
export function encodeTerminalStatus(status: TerminalJobStatus): string {
  if (!isTerminalJobState(status.state)) {
    throw new ReboundError(ErrorCode.ILLEGAL_STATE, `'${status.state}' is not a terminal job state`);
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
    throw new ReboundError(ErrorCode.HA_DIR_INVALID, `${where} is not valid JSON`);
  }
  if (typeof o !== 'object' || o === null || typeof o.state !== 'string' || !isTerminalJobState(o.state) || typeof o.finishedAtMs !== 'number') {
    throw new ReboundError(ErrorCode.HA_DIR_INVALID, `${where} is not a terminal job status`);
  }
  return { state: o.state, finishedAtMs: o.finishedAtMs, ...(typeof o.failure === 'string' ? { failure: o.failure } : {}) };
}

function checkAttachmentName(name: string): void {
  if (!isSafeName(name)) {
    throw new ReboundError(ErrorCode.ILLEGAL_STATE, `job attachment name '${name}' is not a plain file name`);
  }
}

function damageOf(dir: string, err: unknown): string {
  return `stored files of this job cannot be read (${errorMessage(err)}); it is not run or recovered: inspect or remove ${dir}`;
}

/**
 * Submitted jobs, kept under `<ha>/jobs/<jobId>/` so that a new leader can take them over (Flink's
 * JobGraphStore). Every file is written atomically; a job exists once its jobgraph.pb does, which
 * is written last, so a submission cut short by a crash is never reported as a job.
 */
export class FileJobGraphStore implements JobGraphStore {
  constructor(private readonly haDir: string) {}

  /** Directory of one job, which also holds its JobEventStore files (`job-events/`). */
  jobDir(jobId: string): string {
    checkJobId(jobId);
    return HaPaths.jobDir(this.haDir, jobId);
  }

  /** Persists a submitted job. Resolves only once both files are durable. */
  async putJob(graph: JobGraph, moduleBundle: Uint8Array): Promise<void> {
    const jobId = graph.job_id ?? '';
    const dir = this.jobDir(jobId);
    await writeFileAtomic(join(dir, JOB_MODULE_FILE), moduleBundle);
    await writeFileAtomic(join(dir, JOB_GRAPH_FILE), encodeJobGraphFile(graph));
  }

  async hasJob(jobId: string): Promise<boolean> {
    if (!isSafeName(jobId)) return false;
    try {
      return (await stat(join(this.jobDir(jobId), JOB_GRAPH_FILE))).isFile();
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return false;
      throw err;
    }
  }

  async getJob(jobId: string): Promise<StoredJob> {
    if (!isSafeName(jobId)) throw new JobNotFoundError(jobId);
    const dir = this.jobDir(jobId);
    let bytes: Buffer;
    try {
      bytes = await readFile(join(dir, JOB_GRAPH_FILE));
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) throw new JobNotFoundError(jobId);
      throw err;
    }
    const graph = decodeJobGraphFile(bytes, join(dir, JOB_GRAPH_FILE));
    // A zero-filled file has no frame and decodes as an empty graph: only a graph that names this
    // job is its graph.
    if (graph.job_id !== jobId) {
      throw new ReboundError(ErrorCode.JOB_INVALID, `${join(dir, JOB_GRAPH_FILE)} names job '${graph.job_id}', not ${jobId}: it is not this job's graph`);
    }
    return { graph, modulePath: join(dir, JOB_MODULE_FILE) };
  }

  /** Ids of all stored jobs, terminal or not, sorted. */
  async listJobIds(): Promise<string[]> {
    let entries: string[];
    try {
      entries = await readdir(HaPaths.jobsDir(this.haDir));
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'ENOTDIR')) return [];
      throw err;
    }
    const ids: string[] = [];
    for (const name of entries.sort()) {
      if (!isSafeName(name)) continue;
      if (await this.hasJob(name)) ids.push(name);
    }
    return ids;
  }

  /** Records that a job reached a globally terminal state, so no leader runs it again. */
  async markTerminal(jobId: string, status: TerminalJobStatus): Promise<void> {
    const record = encodeTerminalStatus(status);
    await this.requireJob(jobId);
    await writeFileAtomic(join(this.jobDir(jobId), JOB_STATUS_FILE), record);
  }

  async getTerminalStatus(jobId: string): Promise<TerminalJobStatus | undefined> {
    await this.requireJob(jobId);
    const path = join(this.jobDir(jobId), JOB_STATUS_FILE);
    let text: string;
    try {
      text = await readFile(path, 'utf8');
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return undefined;
      throw err;
    }
    return decodeTerminalStatus(text, path);
  }

  /**
   * Every stored job with its terminal status, oldest submission first. A job whose files cannot
   * be read is listed with the reason (`damage`) instead of failing the whole listing.
   */
  async listJobs(): Promise<StoredJobSummary[]> {
    const jobs: StoredJobSummary[] = [];
    for (const jobId of await this.listJobIds()) {
      try {
        const { graph } = await this.getJob(jobId);
        jobs.push({ jobId, name: graph.name, submittedAtMs: graph.submitted_at_ms, status: await this.getTerminalStatus(jobId) });
      } catch (err) {
        // Removed since it was listed.
        if (err instanceof JobNotFoundError) continue;
        jobs.push({ jobId, name: '', submittedAtMs: 0, status: undefined, damage: damageOf(this.jobDir(jobId), err) });
      }
    }
    return jobs.sort((a, b) => a.submittedAtMs - b.submittedAtMs || a.jobId.localeCompare(b.jobId));
  }

  /**
   * Jobs a new leader must take over: stored and without a terminal status. Terminal jobs are
   * recognised by the status file alone, so a takeover never decodes every job ever submitted.
   * A job whose status file cannot be read is returned with `damage` set and must be skipped.
   */
  async listUnfinishedJobs(): Promise<{ readonly jobId: string; readonly damage?: string }[]> {
    const out: { jobId: string; damage?: string }[] = [];
    for (const jobId of await this.listJobIds()) {
      try {
        if (!(await this.getTerminalStatus(jobId))) out.push({ jobId });
      } catch (err) {
        if (err instanceof JobNotFoundError) continue;
        out.push({ jobId, damage: damageOf(this.jobDir(jobId), err) });
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
      // jobgraph.pb first: without it the directory is no longer a job, even if the rest of the
      // removal is cut short.
      await rm(join(this.jobDir(jobId), JOB_GRAPH_FILE), { force: true });
      await rm(this.jobDir(jobId), { recursive: true, force: true });
      removed.push(jobId);
    }
    return removed;
  }

  /** Stores a small file with the job (e.g. a recovery report), atomically. */
  async putJobAttachment(jobId: string, name: string, data: string | Uint8Array): Promise<void> {
    checkAttachmentName(name);
    await this.requireJob(jobId);
    await writeFileAtomic(join(this.jobDir(jobId), ATTACHMENTS_DIR, name), data);
  }

  /** The attachment's bytes, or undefined when it was never written. */
  async getJobAttachment(jobId: string, name: string): Promise<Uint8Array | undefined> {
    checkAttachmentName(name);
    await this.requireJob(jobId);
    try {
      return new Uint8Array(await readFile(join(this.jobDir(jobId), ATTACHMENTS_DIR, name)));
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return undefined;
      throw err;
    }
  }

  /** Names of the job's attachments, sorted. */
  async listJobAttachments(jobId: string): Promise<string[]> {
    await this.requireJob(jobId);
    try {
      const names = await readdir(join(this.jobDir(jobId), ATTACHMENTS_DIR));
      return names.filter((n) => !n.includes(TMP_MARKER)).sort();
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return [];
      throw err;
    }
  }

  private async requireJob(jobId: string): Promise<void> {
    if (!(await this.hasJob(jobId))) throw new JobNotFoundError(jobId);
  }
}
