import { ErrorCode, StaleEpochError } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { EpochFence } from './epoch-fence.js';

describe('EpochFence', () => {
  it('accepts equal and newer epochs and rejects older ones', () => {
    const fence = new EpochFence();
    expect(fence.highest()).toBe(0);
    fence.observe(2);
    fence.observe(2);
    fence.observe(5);
    expect(fence.highest()).toBe(5);
    expect(fence.accepts(4)).toBe(false);
    let err: unknown;
    try {
      fence.observe(4);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StaleEpochError);
    expect((err as StaleEpochError).code).toBe(ErrorCode.STALE_EPOCH);
    expect((err as StaleEpochError).currentEpoch).toBe(5);
    expect(fence.highest()).toBe(5);
  });
});
