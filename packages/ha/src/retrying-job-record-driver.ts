import { ErrorCode, NotLeaderError, ReboundError, errorMessage, sleep } from '@rebound/core';
import type { Configuration, JobGraph } from '@rebound/core';
import type { LeaderStoreOptions } from './ha-services.js';
import type { JobRecord, JobRecordDriver } from './job-record-driver.js';

/**
 * How a leader's job store waits out an HA backend that does not answer. Only errors the driver
 * classifies as UNAVAILABLE are retried; a refusal (fenced epoch, damaged record) is an answer.
 */
export interface HaRetryPolicy {
  readonly initialBackoffMs: number;
  readonly maxBackoffMs: number;
  /** Aborted when the leadership the store writes for ends: the next leader carries on. */
  readonly until: AbortSignal;
  /**
   * How long the store may stay silent before the wait ends anyway: a lease. A store that did
   * not answer for that long cannot have renewed the lease either, so the leadership is over
   * even if its revocation has not been delivered yet (it can be queued behind the very call
   * that is waiting here).
   */
  readonly budgetMs: number;
  /** Told of every retry, e.g. to log it. */
  onRetry?(what: string, err: ReboundError, attempt: number): void;
}

/**
 * A JobRecordDriver that retries its driver's UNAVAILABLE errors with capped exponential backoff
 * for as long as the leadership lasts. An etcd member cut off for a couple of seconds must not
 * fail a job whose work is done (its commit manifest cannot be written, its graph cannot be read
 * back): the leader waits for the store instead, until the leadership ends or for at most a
 * lease: an HA store that does not answer cannot renew the lease either, so after that long the
 * leadership is over, and the job is left for the next leader.
 */
export class RetryingJobRecordDriver implements JobRecordDriver {
  readonly recordKind: string;

  constructor(
    private readonly driver: JobRecordDriver,
    private readonly policy: HaRetryPolicy,
  ) {
    this.recordKind = driver.recordKind;
  }

  where(jobId: string): string {
    return this.driver.where(jobId);
  }

  nameOf(jobId: string, record: JobRecord): string {
    return this.driver.nameOf(jobId, record);
  }

  has(jobId: string, record: JobRecord): Promise<boolean> {
    return this.retry(`reading ${this.nameOf(jobId, record)}`, () => this.driver.has(jobId, record));
  }

  get(jobId: string, record: JobRecord): Promise<Uint8Array | undefined> {
    return this.retry(`reading ${this.nameOf(jobId, record)}`, () => this.driver.get(jobId, record));
  }

  put(jobId: string, record: JobRecord, data: string | Uint8Array, what: string): Promise<void> {
    // A put whose answer was lost may have been applied; writing the same value again is harmless.
    return this.retry(what, () => this.driver.put(jobId, record, data, what));
  }

  listAttachments(jobId: string): Promise<string[]> {
    return this.retry(`listing the attachments of job ${jobId}`, () => this.driver.listAttachments(jobId));
  }

  jobIds(): Promise<string[]> {
    return this.retry('listing the jobs', () => this.driver.jobIds());
  }

  get unfinishedJobIds(): (() => Promise<string[]>) | undefined {
    const list = this.driver.unfinishedJobIds?.bind(this.driver);
    return list ? () => this.retry('listing the unfinished jobs', list) : undefined;
  }

  remove(jobId: string): Promise<void> {
    return this.retry(`removing job ${jobId}`, () => this.driver.remove(jobId));
  }

  encodeGraph(graph: JobGraph): Uint8Array {
    return this.driver.encodeGraph(graph);
  }

  decodeGraph(jobId: string, bytes: Uint8Array): ReturnType<JobRecordDriver['decodeGraph']> {
    return this.driver.decodeGraph(jobId, bytes);
  }

  private async retry<T>(what: string, op: () => Promise<T>): Promise<T> {
    const { until } = this.policy;
    let backoffMs = this.policy.initialBackoffMs;
    let silentSince: number | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await op();
      } catch (err) {
        if (!(err instanceof ReboundError) || err.code !== ErrorCode.UNAVAILABLE) throw err;
        silentSince ??= Date.now();
        if (until.aborted || Date.now() - silentSince >= this.policy.budgetMs) throw leadershipEnded(what, err);
        this.policy.onRetry?.(what, err, attempt);
        await sleep(backoffMs, until);
        if (until.aborted) throw leadershipEnded(what, err);
        backoffMs = Math.min(backoffMs * 2, this.policy.maxBackoffMs);
      }
    }
  }
}

function leadershipEnded(what: string, err: ReboundError): NotLeaderError {
  return new NotLeaderError(
    `${what}: this leadership ended while the HA store did not answer (${errorMessage(err)}); the next leader carries on`,
  );
}

/** `driver`, retried per `policy` when there is one (a leader's store), as is otherwise. */
export function withRetries(driver: JobRecordDriver, policy: HaRetryPolicy | undefined): JobRecordDriver {
  return policy ? new RetryingJobRecordDriver(driver, policy) : driver;
}

/** The retry policy of a leader's store: backoff from `config`, bound to `options`' leadership. */
export function leaderRetryPolicy(
  config: Configuration,
  options: LeaderStoreOptions | undefined,
): HaRetryPolicy | undefined {
  if (!options) return undefined;
  return {
    initialBackoffMs: config.getDurationMs('high-availability.retry.initial-backoff'),
    maxBackoffMs: config.getDurationMs('high-availability.retry.max-backoff'),
    budgetMs: config.getDurationMs('high-availability.lease.timeout'),
    until: options.until,
    onRetry: options.onRetry,
  };
}
