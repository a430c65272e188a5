import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCode, ReboundError, silentLogger } from '@rebound/core';
import { backendsUnderTest, DriverFixture } from './ha-drivers.test-util.js';
import type { LeaderInfo } from './leader-info.js';
import { RecordingContender } from './testing/recording-contender.js';

/** Leader retrieval as both backends provide it (see ha-drivers.test-util.ts for how each half runs). */
describe.each(backendsUnderTest())('leader retrieval on the $name driver', (backend) => {
  const f = new DriverFixture(backend);
  beforeAll(f.setUp);
  afterAll(f.tearDown);
  afterEach(f.cleanUp);

  it('followers see each new leader in order, with its epoch and address, and wait for the first one', async () => {
    await backend.reset();
    const follower = f.services();
    const retrieval = follower.createLeaderRetrievalService(silentLogger());
    await expect(retrieval.waitForLeader(300)).rejects.toSatisfy(
      (e: unknown) => e instanceof ReboundError && e.code === ErrorCode.LEADER_NOT_FOUND,
    );
    const seen: LeaderInfo[] = [];
    retrieval.start({ onLeaderChange: (info) => void seen.push(info) });
    const waiting = retrieval.waitForLeader(10_000);
    const a = f.contend(f.services(), 'a');
    const ra = new RecordingContender();
    await a.start(ra);
    const epochA = await ra.nextGrant(0);
    expect(await waiting).toMatchObject({ jobmasterId: 'a', epoch: epochA });
    const b = f.contend(f.services(), 'b');
    const rb = new RecordingContender();
    await b.start(rb);
    await a.stop();
    const epochB = await rb.nextGrant(0);
    await expect.poll(() => retrieval.current()?.epoch, { timeout: 10_000 }).toBe(epochB);
    expect(seen.map((l) => [l.epoch, l.jobmasterId, l.address])).toEqual([
      [epochA, 'a', 'a:9000'],
      [epochB, 'b', 'b:9000'],
    ]);
    expect(await retrieval.refresh()).toMatchObject({ jobmasterId: 'b', address: 'b:9000' });
    retrieval.stop();
  });

  it('waitForLeader follows the record by itself, unstarted, until a leader appears', async () => {
    await backend.reset();
    const retrieval = f.services().createLeaderRetrievalService(silentLogger());
    const waiting = retrieval.waitForLeader(10_000);
    const { epoch } = await f.lead('a');
    expect(await waiting).toMatchObject({ epoch, jobmasterId: 'a', address: 'a:9000' });
    expect(await retrieval.waitForLeader(1)).toMatchObject({ epoch });
  });

  it('waitForLeader fails with LEADER_NOT_FOUND after the timeout, naming where it looked', async () => {
    await backend.reset();
    const retrieval = f.services().createLeaderRetrievalService(silentLogger());
    const err = await retrieval.waitForLeader(50).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReboundError);
    expect((err as ReboundError).code).toBe(ErrorCode.LEADER_NOT_FOUND);
    expect((err as ReboundError).message).toContain(backend.leaderRecordLocation());
  });
});
