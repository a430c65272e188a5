import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  decodeMessage,
  encodeMessage,
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

function checkAttachmentName(name: string): void {
  if (!isSafeName(name)) {
    throw new ReboundError(ErrorCode.ILLEGAL_STATE, `job attachment name '${name}' is not a plain file name`);
  }
}

/**
 * Submitted jobs, kept under `<ha>/jobs/<jobId>/` so that a new leader can take them over (Flink's
 * JobGraphStore). Every file is written atomically; a job exists once its jobgraph.pb does, which
 * is written last, so a submission cut short by a crash is never reported as a job.
 */
export class JobGraphStore {
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
    await writeFileAtomic(join(dir, JOB_GRAPH_FILE), encodeMessage('JobGraph', graph));
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
    let graph: JobGraph__Output;
    try {
      graph = decodeMessage<JobGraph__Output>('JobGraph', bytes);
    } catch (err) {
      throw new ReboundError(ErrorCode.JOB_INVALID, `${join(dir, JOB_GRAPH_FILE)} cannot be decoded: ${(err as Error).message}`, { cause: err });
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
    if (!isTerminalJobState(status.state)) {
      throw new ReboundError(ErrorCode.ILLEGAL_STATE, `'${status.state}' is not a terminal job state`);
    }
    await this.requireJob(jobId);
    const record: TerminalJobStatus = {
      state: status.state,
      finishedAtMs: status.finishedAtMs,
      ...(status.failure !== undefined ? { failure: status.failure } : {}),
    };
    await writeFileAtomic(join(this.jobDir(jobId), JOB_STATUS_FILE), `${JSON.stringify(record)}\n`);
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
    const o = JSON.parse(text) as Partial<TerminalJobStatus>;
    if (typeof o.state !== 'string' || !isTerminalJobState(o.state) || typeof o.finishedAtMs !== 'number') {
      throw new ReboundError(ErrorCode.HA_DIR_INVALID, `${path} is not a terminal job status`);
    }
    return {
      state: o.state,
      finishedAtMs: o.finishedAtMs,
      ...(typeof o.failure === 'string' ? { failure: o.failure } : {}),
    };
  }

  /** Every stored job with its terminal status, oldest submission first. */
  async listJobs(): Promise<StoredJobSummary[]> {
    const jobs: StoredJobSummary[] = [];
    for (const jobId of await this.listJobIds()) {
      let graph: JobGraph__Output;
      try {
        graph = (await this.getJob(jobId)).graph;
      } catch (err) {
        // Removed since it was listed.
        if (err instanceof JobNotFoundError) continue;
        throw err;
      }
      jobs.push({ jobId, name: graph.name, submittedAtMs: graph.submitted_at_ms, status: await this.getTerminalStatus(jobId) });
    }
    return jobs.sort((a, b) => a.submittedAtMs - b.submittedAtMs || a.jobId.localeCompare(b.jobId));
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
