import { afterAll, afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { backendsUnderTest, DriverFixture } from './ha-drivers.test-util.js';
import { RecordingContender } from './testing/recording-contender.js';

/** Leader election as both backends provide it (see ha-drivers.test-util.ts for how each half runs). */
describe.each(backendsUnderTest())('leader election on the $name driver', (backend) => {
  const f = new DriverFixture(backend);
  beforeAll(f.setUp);
  afterAll(f.tearDown);
  afterEach(f.cleanUp);

  it('lets exactly one of several racing contenders lead; the others stand by without a callback', async () => {
    await backend.reset();
    const lease = { 'high-availability.lease.timeout': '60 s', 'high-availability.lease.renew-interval': '1 s' };
    const all = ['a', 'b', 'c', 'd', 'e'].map((id) => ({
      id,
      election: f.contend(f.services(lease), id),
      contender: new RecordingContender(),
    }));
    await Promise.all(all.map(({ election, contender }) => election.start(contender)));

    const leaders = all.filter(({ election }) => election.hasLeadership());
    expect(leaders).toHaveLength(1);
    const leader = leaders[0]!;
    const epoch = leader.election.currentEpoch()!;
    expect(await leader.contender.nextGrant(0)).toBe(epoch);
    expect(await f.services().getLeader()).toMatchObject({
      epoch,
      jobmasterId: leader.id,
      address: `${leader.id}:9000`,
    });
    for (const other of all.filter((x) => x !== leader)) {
      expect(other.election.currentEpoch()).toBeUndefined();
      expect(other.contender.events).toEqual([]);
    }
  });

  it('hands over to a standby at once when the leader stops; epochs strictly increase', async () => {
    await backend.reset();
    // The lease timeout is far beyond the test's duration: each hand-over below comes from stop().
    const lease = { 'high-availability.lease.timeout': '60 s' };
    const all = await Promise.all(
      ['a', 'b', 'c'].map(async (id) => ({
        id,
        election: f.contend(f.services(lease), id),
        contender: new RecordingContender(),
      })),
    );
    await Promise.all(all.map(({ election, contender }) => election.start(contender)));
    const epochs: number[] = [];
    let running = [...all];
    while (running.length > 0) {
      await expect.poll(() => running.filter((x) => x.election.hasLeadership()).length, { timeout: 10_000 }).toBe(1);
      const leader = running.find((x) => x.election.hasLeadership())!;
      const epoch = leader.election.currentEpoch()!;
      expect(await leader.contender.nextGrant(0)).toBe(epoch);
      epochs.push(epoch);
      const reader = f.services();
      expect(await reader.getLeader()).toMatchObject({ epoch, jobmasterId: leader.id, address: `${leader.id}:9000` });
      expect(await reader.leaderEpochSource()()).toBe(epoch);
      // Nobody took an expired lease over: there is no previous leader to date.
      expect(leader.election.previousLeaderLastHeardMs()).toBeUndefined();
      running = running.filter((x) => x !== leader);
      const marks = running.map(({ contender }) => contender.events.length);
      const stoppedAt = Date.now();
      await leader.election.stop();
      expect(leader.contender.revocations()).toEqual(['leader election service stopped']);
      if (running.length > 0) {
        await Promise.race(running.map(({ contender }, i) => contender.nextGrant(marks[i])));
        // Handed over at the next poll or watch event, not after the 60 s lease timeout.
        expect(Date.now() - stoppedAt).toBeLessThan(2_000);
      }
    }
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]!).toBeGreaterThan(epochs[i - 1]!);
  });

  it('a leader whose lease was taken away learns it, and a newer epoch leads', async () => {
    await backend.reset();
    // The file leader does not renew by itself here: it must not win the lock back before b.
    const haA = f.services({ 'high-availability.lease.renew-interval': '1 h' });
    const a = f.contend(haA, 'a');
    const ra = new RecordingContender();
    await a.start(ra);
    const epochA = await ra.nextGrant(0);
    const b = f.contend(f.services(), 'b');
    const rb = new RecordingContender();
    await b.start(rb);
    await backend.stealLease(haA);
    const epochB = await rb.nextGrant(0);
    expect(epochB).toBeGreaterThan(epochA);
    // The file leader learns at its next renewal, the etcd one by its watch; confirming asks now.
    await a.confirmLeadership();
    expect(await ra.nextRevoke(0)).toMatch(/lease lost|leader key|epoch/);
    expect(a.hasLeadership()).toBe(false);
    expect(await haA.fencingEpochSource(epochA)()).toBeGreaterThan(epochA);
    expect((await haA.getLeader())?.epoch).toBe(epochB);
  });

  it('gives leadership up when grantLeadership fails', async () => {
    await backend.reset();
    const a = f.contend(f.services(), 'a');
    const listener = new RecordingContender(() => {
      throw new Error('port in use');
    });
    await a.start(listener);
    expect(await listener.nextRevoke(0)).toBe('grantLeadership failed: port in use');
    expect(a.hasLeadership()).toBe(false);
  });

  it('ends a leadership the moment it is lost, while its grant is still starting', async () => {
    await backend.reset();
    let ended: AbortSignal | undefined;
    let finishStart = (): void => undefined;
    const starting = new Promise<void>((resolve) => (finishStart = resolve));
    // A failed expectation must not leave the grant running: stopping waits for it.
    onTestFinished(() => finishStart());
    const listener = new RecordingContender(async (_epoch, signal) => {
      ended ??= signal;
      await starting;
    });
    // The file leader neither renews nor contends again by itself here: confirming finds the loss.
    const ha = f.services({
      'high-availability.lease.timeout': '10 s',
      'high-availability.lease.renew-interval': '1 h',
      'high-availability.lease.poll-interval': '1 h',
    });
    const a = f.contend(ha, 'a');
    await a.start(listener);
    expect(ended?.aborted).toBe(false);
    await backend.stealLease(ha);

    // The etcd leader may have learnt it from its watch already; confirming asks now.
    await a.confirmLeadership();
    // The revocation waits for the grant to return; the signal does not.
    expect(ended?.aborted).toBe(true);
    expect(String(ended?.reason)).toMatch(/lease lost|leader key/);
    expect(listener.revocations()).toEqual([]);
    finishStart();
    expect(await listener.nextRevoke(0)).toMatch(/lease lost|leader key/);
  });
});
