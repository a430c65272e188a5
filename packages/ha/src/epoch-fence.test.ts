import { ErrorCode, StaleEpochError } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { EpochFence, UnconfirmedEpochError } from './epoch-fence.js';

/** A leader record the test moves by hand, counting how often the fence reads it. */
function record(initial: number | undefined) {
  const r = { epoch: initial, reads: 0 };
  const source = async (): Promise<number | undefined> => {
    r.reads++;
    return r.epoch;
  };
  return { r, source };
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (e) {
    return e;
  }
  throw new Error('expected a rejection');
}

describe('EpochFence', () => {
  it('admits the recorded leader, then rejects older epochs', async () => {
    const { r, source } = record(2);
    const fence = new EpochFence(source);
    expect(fence.highest()).toBe(0);
    await fence.admit(2);
    await fence.admit(2);
    expect(r.reads).toBe(1);
    r.epoch = 5;
    await fence.admit(5);
    expect(fence.highest()).toBe(5);
    expect(fence.accepts(4)).toBe(false);
    const err = await rejection(fence.admit(4));
    expect(err).toBeInstanceOf(StaleEpochError);
    expect((err as StaleEpochError).code).toBe(ErrorCode.STALE_EPOCH);
    expect((err as StaleEpochError).currentEpoch).toBe(5);
    expect(fence.highest()).toBe(5);
  });

  it('never raises the fence on a claimed epoch the leader record does not confirm', async () => {
    const { source } = record(3);
    const fence = new EpochFence(source);
    await fence.admit(3);
    const err = await rejection(fence.admit(9e15));
    expect(err).toBeInstanceOf(UnconfirmedEpochError);
    expect((err as UnconfirmedEpochError).code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
    // The real leader is still admitted: a forged request cannot fence it out.
    expect(fence.highest()).toBe(3);
    await fence.admit(3);
  });

  it('refuses any epoch while no leader is recorded', async () => {
    const fence = new EpochFence(record(undefined).source);
    expect(await rejection(fence.admit(1))).toBeInstanceOf(UnconfirmedEpochError);
    expect(fence.highest()).toBe(0);
  });

  it('learns a newer recorded epoch from a deposed claim and rejects the claim as stale', async () => {
    const { source } = record(7);
    const fence = new EpochFence(source);
    const err = await rejection(fence.admit(4));
    expect(err).toBeInstanceOf(StaleEpochError);
    expect(fence.highest()).toBe(7);
  });

  it('raise() takes the HA service word directly and never lowers', () => {
    const fence = new EpochFence(record(undefined).source);
    fence.raise(4);
    fence.raise(2);
    expect(fence.highest()).toBe(4);
  });

  it('refuses a newer epoch for now, as unconfirmed, while the leader record cannot be read', async () => {
    const fence = new EpochFence(async () => {
      throw new Error('circuit breaker is open');
    }, 3);
    const err = await rejection(fence.admit(4));
    expect(err).toBeInstanceOf(UnconfirmedEpochError);
    expect((err as UnconfirmedEpochError).code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
    expect(String((err as Error).message)).toMatch(/cannot be read \(circuit breaker is open\)/);
    expect(fence.highest()).toBe(3);
    await expect(fence.admit(3)).resolves.toBeUndefined();
  });
});
