import { describe, expect, it } from 'vitest';
import { JobNotFoundError, NotLeaderError, UnavailableError } from '@rebound/core';
import type { JobRecordDriver } from './job-record-driver.js';
import { RetryingJobRecordDriver } from './retrying-job-record-driver.js';

/** A driver whose `get` fails with each of `failures` in turn, then answers. */
function flaky(failures: Error[]): { driver: JobRecordDriver; calls: () => number } {
  let calls = 0;
  const driver = {
    recordKind: 'records',
    where: (id: string) => id,
    nameOf: (id: string, record: string) => `${id}/${record}`,
    get: async () => {
      const err = failures[calls++];
      if (err) throw err;
      return new Uint8Array([1]);
    },
  } as unknown as JobRecordDriver;
  return { driver, calls: () => calls };
}

const unavailable = (): UnavailableError => new UnavailableError('no answer within 5 ms');

describe('RetryingJobRecordDriver', () => {
  it('retries what got no answer, with backoff, until it answers', async () => {
    const { driver, calls } = flaky([unavailable(), unavailable(), unavailable()]);
    const retries: number[] = [];
    const d = new RetryingJobRecordDriver(driver, {
      initialBackoffMs: 1,
      maxBackoffMs: 2,
      until: new AbortController().signal,
      budgetMs: 60_000,
      onRetry: (_what, _err, attempt) => retries.push(attempt),
    });
    expect(await d.get('job', 'graph')).toEqual(new Uint8Array([1]));
    expect(calls()).toBe(4);
    expect(retries).toEqual([1, 2, 3]);
  });

  it('passes an answer that is a refusal through at once', async () => {
    const { driver, calls } = flaky([new JobNotFoundError('job')]);
    const d = new RetryingJobRecordDriver(driver, {
      initialBackoffMs: 1,
      maxBackoffMs: 1,
      until: new AbortController().signal,
      budgetMs: 60_000,
    });
    await expect(d.get('job', 'graph')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(calls()).toBe(1);
  });

  it('ends the wait with NotLeaderError when the leadership ends', async () => {
    const { driver } = flaky(Array.from({ length: 1000 }, unavailable));
    const leadership = new AbortController();
    const d = new RetryingJobRecordDriver(driver, {
      initialBackoffMs: 60_000,
      maxBackoffMs: 60_000,
      until: leadership.signal,
      budgetMs: 60_000,
      onRetry: () => leadership.abort(),
    });
    await expect(d.get('job', 'graph')).rejects.toBeInstanceOf(NotLeaderError);
  });

  it('ends the wait after a lease of silence, even when no revocation came', async () => {
    const { driver, calls } = flaky(Array.from({ length: 1000 }, unavailable));
    const d = new RetryingJobRecordDriver(driver, {
      initialBackoffMs: 5,
      maxBackoffMs: 5,
      until: new AbortController().signal,
      budgetMs: 50,
    });
    await expect(d.get('job', 'graph')).rejects.toThrow(/leadership ended while the HA store did not answer/);
    expect(calls()).toBeGreaterThan(1);
  });
});
