import {
  ErrorCode,
  JobNotFoundError,
  ReboundError,
  decodeMessage,
  encodeMessage,
  errorMessage,
  newReadCapability,
} from '@rebound/core';
import type { JobStatus, JobStatus__Output, RecoveryReport } from '@rebound/core';
import type { JobGraphStore } from '@rebound/ha';
import type { ExceptionHistorySnapshot } from './exception-history.js';
import { parseCommitManifest, type CommitManifest } from './sink-committer.js';

/** The JobGraphStore attachments of a job: names, as they appear in the HA directory and etcd. */
export const JobRecordName = {
  recoveries: 'recoveries.json',
  commitManifest: 'commit.json',
  loadAttempts: 'load-attempts.json',
  readCapability: 'partition-read-capability',
  exceptions: 'exceptions.json',
  finalStatus: 'final-status.pb',
} as const;
export type JobRecordName = (typeof JobRecordName)[keyof typeof JobRecordName];

/** A stored record that exists but cannot be read or decoded, where no fallback is safe. */
export class JobRecordDamagedError extends ReboundError {
  constructor(
    readonly jobId: string,
    readonly record: JobRecordName,
    reason: string,
  ) {
    super(ErrorCode.HA_DIR_INVALID, `job ${jobId}: ${record} ${reason}`);
  }
}

/** Recovery reports as stored, with why they are missing when the record is damaged. */
export interface StoredRecoveries {
  readonly reports: RecoveryReport[];
  /** Set when recoveries.json exists but cannot be read or is not a JSON array; reports is then []. */
  readonly damage?: string;
}

/** JobMasters that began to load the job's module and did not finish, with why the count restarted. */
export interface StoredLoadAttempts {
  readonly attempts: number;
  /** Set when load-attempts.json exists but cannot be read or decoded; attempts is then 0. */
  readonly damage?: string;
}

const EMPTY_HISTORY: ExceptionHistorySnapshot = { entries: [], truncated: false };

/** The part of a JobGraphStore the records need: a read-only store serves the readers. */
export type JobRecordStore = Pick<JobGraphStore, 'getJobAttachment' | 'putJobAttachment'>;

/**
 * The typed records a job keeps beside its graph in the JobGraphStore: the only code that names,
 * reads or writes those attachments. Each record has ONE error policy, whoever reads it (the
 * JobRunner taking a job over, the Dispatcher, REST, metrics):
 *
 * | record | absent | cannot be read or decoded |
 * |---|---|---|
 * | recoveries | no reports | no reports, with `damage` (REST shows it, metrics count it, the job notes it for `rebound status`); the next failover rewrites the file |
 * | commit manifest | no commit pending | `JobRecordDamagedError`: neither completing nor rerunning the job is safe, so its takeover fails |
 * | load attempts | 0 | 0, with `damage`: the count restarts (it is rewritten before the load) |
 * | read capability | made and stored | the backend's error: a new one would orphan every partition written under the old one |
 * | exceptions | empty history | empty history: it only explains, never decides |
 * | final status | undefined | undefined: the caller falls back to `status.json` (the terminal state stays known) |
 *
 * A job that is gone (removed meanwhile) reads like an absent record everywhere.
 */
export class JobRecords {
  constructor(private readonly store: JobRecordStore) {}

  /** The raw bytes; undefined when absent or the job is gone. Backend errors propagate. */
  private async raw(jobId: string, name: JobRecordName): Promise<Uint8Array | undefined> {
    try {
      return await this.store.getJobAttachment(jobId, name);
    } catch (err) {
      if (err instanceof JobNotFoundError) return undefined;
      throw err;
    }
  }

  /** The raw bytes, or why they cannot be had (never throws). */
  private async tryRaw(jobId: string, name: JobRecordName): Promise<{ bytes?: Uint8Array; damage?: string }> {
    try {
      return { bytes: await this.raw(jobId, name) };
    } catch (err) {
      return { damage: `${name} cannot be read: ${errorMessage(err)}` };
    }
  }

  private put(jobId: string, name: JobRecordName, data: string | Uint8Array): Promise<void> {
    return this.store.putJobAttachment(jobId, name, data);
  }

  async recoveries(jobId: string): Promise<StoredRecoveries> {
    const { bytes, damage } = await this.tryRaw(jobId, JobRecordName.recoveries);
    if (damage) return { reports: [], damage };
    if (!bytes) return { reports: [] };
    const parsed = parseJson(bytes);
    if (!Array.isArray(parsed))
      return { reports: [], damage: `${JobRecordName.recoveries} is not a JSON array of recovery reports` };
    return { reports: parsed as RecoveryReport[] };
  }

  saveRecoveries(jobId: string, reports: readonly RecoveryReport[]): Promise<void> {
    return this.put(jobId, JobRecordName.recoveries, JSON.stringify(reports));
  }

  /**
   * The manifest of a commit a leader started and may not have finished, checked against the
   * job's own sink directories (`sinkDirectoriesOf` its graph): the HA store's writer is not
   * trusted, so a manifest of another job or with a path outside those is refused.
   */
  async commitManifest(jobId: string, sinkDirs: readonly string[]): Promise<CommitManifest | undefined> {
    let bytes;
    try {
      bytes = await this.raw(jobId, JobRecordName.commitManifest);
    } catch (err) {
      throw new JobRecordDamagedError(jobId, JobRecordName.commitManifest, `cannot be read: ${errorMessage(err)}`);
    }
    if (!bytes) return undefined;
    return parseCommitManifest(bytes, jobId, sinkDirs);
  }

  saveCommitManifest(jobId: string, manifest: CommitManifest): Promise<void> {
    return this.put(jobId, JobRecordName.commitManifest, JSON.stringify(manifest));
  }

  async loadAttempts(jobId: string): Promise<StoredLoadAttempts> {
    const { bytes, damage } = await this.tryRaw(jobId, JobRecordName.loadAttempts);
    if (damage) return { attempts: 0, damage };
    if (!bytes) return { attempts: 0 };
    const parsed = parseJson(bytes) as { attempts?: unknown } | undefined;
    if (typeof parsed?.attempts !== 'number')
      return { attempts: 0, damage: `${JobRecordName.loadAttempts} holds no attempt count` };
    return { attempts: parsed.attempts };
  }

  /** `attempts` JobMasters, the last of `epoch`, began to load the job and did not finish (0: loaded). */
  saveLoadAttempts(jobId: string, attempts: number, epoch: number): Promise<void> {
    return this.put(jobId, JobRecordName.loadAttempts, JSON.stringify({ attempts, epoch }));
  }

  /**
   * The job's partition read capability: made by the first leader that runs the job, kept for
   * every later one, so partitions written under one leader stay readable under the next.
   */
  async readCapability(jobId: string): Promise<string> {
    const stored = await this.raw(jobId, JobRecordName.readCapability);
    if (stored && stored.length > 0) return Buffer.from(stored).toString('utf8');
    const made = newReadCapability();
    await this.put(jobId, JobRecordName.readCapability, made);
    return made;
  }

  /** A finished job's task failures (`ExceptionHistory.snapshot()`), for `/jobs/:id/exceptions`. */
  async exceptions(jobId: string): Promise<ExceptionHistorySnapshot> {
    const { bytes } = await this.tryRaw(jobId, JobRecordName.exceptions);
    return bytes ? parseExceptionHistory(bytes) : EMPTY_HISTORY;
  }

  saveExceptions(jobId: string, history: ExceptionHistorySnapshot): Promise<void> {
    return this.put(jobId, JobRecordName.exceptions, JSON.stringify(history));
  }

  /** The last JobStatus of a finished job, written just before its status.json. */
  async finalStatus(jobId: string): Promise<JobStatus__Output | undefined> {
    const { bytes } = await this.tryRaw(jobId, JobRecordName.finalStatus);
    if (!bytes) return undefined;
    try {
      return decodeMessage<JobStatus__Output>('JobStatus', bytes);
    } catch {
      return undefined;
    }
  }

  saveFinalStatus(jobId: string, status: JobStatus): Promise<void> {
    return this.put(jobId, JobRecordName.finalStatus, encodeMessage('JobStatus', status));
  }
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(bytes).toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** A stored exception history; anything that is not one reads as empty. */
function parseExceptionHistory(bytes: Uint8Array): ExceptionHistorySnapshot {
  const o = parseJson(bytes) as Partial<ExceptionHistorySnapshot> | undefined;
  if (!o || typeof o !== 'object') return EMPTY_HISTORY;
  return { entries: Array.isArray(o.entries) ? o.entries : [], truncated: o.truncated === true };
}
