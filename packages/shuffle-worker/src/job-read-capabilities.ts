import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import {
  InvalidArgumentError,
  PermissionDeniedError,
  errorMessage,
  sameSecret,
  writeFileAtomic,
  type Logger,
} from '@rebound/core';

export const JOBS_DIR = 'jobs';
export const CAPABILITY_FILE = 'read-capability';
const FILE_VERSION = 1;

// Job ids become path segments, as in the partition store.
const SAFE_SEGMENT = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;
const isSafeJobId = (jobId: string): boolean => SAFE_SEGMENT.test(jobId) && jobId !== '.' && jobId !== '..';

/** `<dataDir>/jobs/<jobId>/read-capability`. */
export function capabilityFile(dataDir: string, jobId: string): string {
  return join(dataDir, JOBS_DIR, jobId, CAPABILITY_FILE);
}

interface CapabilityFileContents {
  readonly version: number;
  readonly jobId: string;
  readonly readCapability: string;
}

/**
 * The partition read capability of each job a shuffle worker holds partitions of.
 *
 * A TaskManager learns a job's capability from a deployment, which only a leader holding its
 * session can send. A shuffle worker has no deployments: its first writer of a job tells it
 * (PartitionWriteOpen.read_capability), and every later writer of the job must present the same.
 * The capability is kept in the job's directory on disk, written before the worker accepts the
 * first partition of the job, so a restarted worker still refuses reads without it.
 */
export class JobReadCapabilities {
  private readonly byJob = new Map<string, string>();
  /** Serializes recording and forgetting per job (two first writers may race). */
  private readonly locks = new Map<string, Promise<void>>();

  private constructor(
    private readonly dataDir: string,
    private readonly logger: Logger,
  ) {}

  /** The capabilities recorded by earlier processes on `dataDir`. Unreadable files are logged and skipped. */
  static async load(dataDir: string, logger: Logger): Promise<JobReadCapabilities> {
    const caps = new JobReadCapabilities(dataDir, logger.child({ component: 'JobReadCapabilities' }));
    const jobs = await readdir(join(dataDir, JOBS_DIR)).catch(() => [] as string[]);
    for (const jobId of jobs) {
      if (!isSafeJobId(jobId)) continue;
      const path = capabilityFile(dataDir, jobId);
      let problem: string;
      try {
        const o = JSON.parse(await readFile(path, 'utf8')) as Partial<CapabilityFileContents>;
        if (
          o.version === FILE_VERSION &&
          o.jobId === jobId &&
          typeof o.readCapability === 'string' &&
          o.readCapability
        ) {
          caps.byJob.set(jobId, o.readCapability);
          continue;
        }
        problem = 'not a read capability file of this job';
      } catch (err) {
        problem = errorMessage(err);
      }
      caps.logger.warn({ jobId, path, err: problem }, 'ignoring an unreadable read capability');
    }
    return caps;
  }

  /** Jobs with a recorded capability. */
  jobs(): string[] {
    return [...this.byJob.keys()];
  }

  has(jobId: string): boolean {
    return this.byJob.has(jobId);
  }

  /**
   * A writer of `jobId` presents `capability`: the first one of the job records it (durably, before
   * this resolves), later ones must present the same. Throws PermissionDeniedError otherwise.
   */
  async admit(jobId: string, capability: string, partition: string): Promise<void> {
    if (!isSafeJobId(jobId)) throw new InvalidArgumentError(`job id '${jobId}' cannot name a job directory`);
    if (!capability) {
      this.refuse('WritePartition', jobId, partition);
    }
    if (!this.byJob.has(jobId)) {
      await this.withJob(jobId, async () => {
        if (this.byJob.has(jobId)) return;
        const contents: CapabilityFileContents = { version: FILE_VERSION, jobId, readCapability: capability };
        await writeFileAtomic(capabilityFile(this.dataDir, jobId), `${JSON.stringify(contents)}\n`, 0o600);
        this.byJob.set(jobId, capability);
        this.logger.info({ jobId }, 'recorded the read capability of a job');
      });
    }
    if (!sameSecret(this.byJob.get(jobId) ?? '', capability)) this.refuse('WritePartition', jobId, partition);
  }

  /**
   * Refuses (PERMISSION_DENIED, logged) a read of `jobId`'s partitions without its capability. A
   * job without one has no partitions here either (the capability is recorded before the first
   * is written): the read goes on to fail with PARTITION_NOT_FOUND.
   */
  check(jobId: string, given: string, partition: string): void {
    const expected = this.byJob.get(jobId);
    if (expected === undefined || sameSecret(expected, given)) return;
    this.refuse('ReadSubpartitions', jobId, partition);
  }

  /** The job's partitions here are gone: its capability goes too. */
  async forget(jobId: string): Promise<void> {
    if (!isSafeJobId(jobId)) return;
    await this.withJob(jobId, async () => {
      this.byJob.delete(jobId);
      await rm(join(this.dataDir, JOBS_DIR, jobId), { recursive: true, force: true });
    });
  }

  private refuse(method: string, jobId: string, partition: string): never {
    this.logger.warn(
      { event: 'capability.reject', method, jobId, partition },
      `refused ${method} without the job's read capability`,
    );
    throw new PermissionDeniedError(
      `${method} of ${partition} refused: the request does not carry the read capability of job ${jobId}`,
    );
  }

  private async withJob(jobId: string, fn: () => Promise<void>): Promise<void> {
    const previous = this.locks.get(jobId) ?? Promise.resolve();
    const next = previous.then(fn);
    const settled = next.catch(() => undefined);
    this.locks.set(jobId, settled);
    try {
      await next;
    } finally {
      if (this.locks.get(jobId) === settled) this.locks.delete(jobId);
    }
  }
}
