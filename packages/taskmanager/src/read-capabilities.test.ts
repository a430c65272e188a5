import { ErrorCode, ReboundError, silentLogger } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { ReadCapabilities } from './read-capabilities.js';

describe('ReadCapabilities', () => {
  it('requires the job read capability a deployment granted', () => {
    const caps = new ReadCapabilities(silentLogger());
    caps.grant('job-1', 'cap-1');
    expect(() => caps.check('job-1', 'cap-1', 'p')).not.toThrow();
    for (const given of ['', 'cap-2', 'cap-1 ']) {
      let err: unknown;
      try {
        caps.check('job-1', given, 'p');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ReboundError);
      expect((err as ReboundError).code).toBe(ErrorCode.PERMISSION_DENIED);
    }
  });

  it('leaves reads of a job it has no partitions of to the store (PARTITION_NOT_FOUND there)', () => {
    const caps = new ReadCapabilities(silentLogger());
    caps.grant('job-1', 'cap-1');
    caps.forget('job-1');
    expect(() => caps.check('job-1', '', 'p')).not.toThrow();
    expect(() => caps.check('job-2', 'whatever', 'p')).not.toThrow();
  });
});
