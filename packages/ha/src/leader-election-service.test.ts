import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Clock, Configuration, silentLogger } from '@rebound/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HaPaths } from './file/ha-dir.js';
import { LeaderElectionService } from './file/file-leader-election-driver.js';
import { readCurrentEpoch, readLeader } from './leader-info.js';
import { RecordingContender } from './testing/recording-contender.js';

class ManualClock implements Clock {
  constructor(public t = Date.now()) {}
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}

function lease(timeout: string, renew: string, poll: string): Configuration {
  return Configuration.of({
    'high-availability.lease.timeout': timeout,
    'high-availability.lease.renew-interval': renew,
    'high-availability.lease.poll-interval': poll,
  });
}

let haDir: string;
const services: LeaderElectionService[] = [];

function contender(id: string, config: Configuration, clock?: Clock): LeaderElectionService {
  const s = new LeaderElectionService({
    haDir,
    contenderId: id,
    address: `${id}:9000`,
    config,
    logger: silentLogger(),
    ...(clock ? { clock } : {}),
  });
  services.push(s);
  return s;
}

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-ha-'));
});

afterEach(async () => {
  await Promise.all(services.splice(0).map((s) => s.stop()));
  await rm(haDir, { recursive: true, force: true });
});

/**
 * The file driver's own behaviour: epoch files, lease expiry on its clock, leader.json written by
 * hand, the lock directory. What both backends share is in leader-election.drivers.test.ts.
 */
describe('LeaderElectionService', () => {
  it('numbers epochs 1, 2, 3, … across repeated elections, each with its file in epochs/', async () => {
    // The lease timeout is far beyond the test's duration: each hand-over below comes from stop().
    const config = lease('60 s', '50 ms', '10 ms');
    const all = ['a', 'b', 'c', 'd'].map((id) => ({
      id,
      service: contender(id, config),
      listener: new RecordingContender(),
    }));
    await Promise.all(all.map(({ service, listener }) => service.start(listener)));

    const epochs: number[] = [];
    let running = [...all];
    while (running.length > 0) {
      const leaders = running.filter(({ service }) => service.hasLeadership());
      expect(leaders).toHaveLength(1);
      const leader = leaders[0]!;
      const epoch = leader.service.currentEpoch()!;
      epochs.push(epoch);
      expect(await readLeader(haDir)).toMatchObject({ epoch, jobmasterId: leader.id, address: `${leader.id}:9000` });

      running = running.filter((x) => x !== leader);
      const marks = running.map(({ listener }) => listener.events.length);
      await leader.service.stop();
      expect(leader.listener.revocations()).toEqual(['leader election service stopped']);
      if (running.length > 0) await Promise.race(running.map(({ listener }, i) => listener.nextGrant(marks[i])));
    }
    expect(epochs).toEqual([1, 2, 3, 4]);
    expect(await readdir(HaPaths.epochsDir(haDir))).toEqual([
      '000000000001',
      '000000000002',
      '000000000003',
      '000000000004',
    ]);
    expect(await readCurrentEpoch(haDir)).toBe(4);
  });

  it('takes over an expired lease; the old leader sees the loss, verifies a late renewal, and can win again', async () => {
    const clock = new ManualClock();
    // Renewals far apart in real time, so lease expiry is driven by the manual clock only.
    const config = lease('10 s', '1 h', '10 ms');
    const a = contender('a', config, clock);
    const b = contender('b', config, clock);
    const la = new RecordingContender();
    const lb = new RecordingContender();
    await a.start(la);
    await b.start(lb);
    expect(a.currentEpoch()).toBe(1);
    expect(b.hasLeadership()).toBe(false);

    clock.advance(10_001);
    // The lease may have expired: leadership is not claimed until verified.
    expect(a.hasLeadership()).toBe(false);
    expect(await lb.nextGrant(0)).toBe(2);
    expect(b.currentEpoch()).toBe(2);

    expect(await a.confirmLeadership()).toBe(false);
    expect(await la.nextRevoke(0)).toMatch(/lease lost: the lock is now held by b/);
    expect(await readLeader(haDir)).toMatchObject({ epoch: 2, jobmasterId: 'b' });

    const mark = la.events.length;
    await b.stop();
    expect(await la.nextGrant(mark)).toBe(3);
    expect(a.currentEpoch()).toBe(3);
    expect(await readLeader(haDir)).toMatchObject({ epoch: 3, jobmasterId: 'a' });
  });

  it('keeps leadership when a late renewal finds the lease still its own', async () => {
    const clock = new ManualClock();
    const a = contender('a', lease('10 s', '1 h', '10 ms'), clock);
    const la = new RecordingContender();
    await a.start(la);
    clock.advance(60_000);
    expect(a.hasLeadership()).toBe(false);
    expect(await a.confirmLeadership()).toBe(true);
    expect(a.currentEpoch()).toBe(1);
    expect(la.revocations()).toEqual([]);
    expect(Math.round((await stat(HaPaths.lockDir(haDir))).mtimeMs)).toBe(clock.now());
  });

  it('steps down when leader.json names a newer epoch, and never overwrites it', async () => {
    const a = contender('a', lease('10 s', '1 h', '1 h'));
    const la = new RecordingContender();
    await a.start(la);
    const newer = { epoch: 7, jobmasterId: 'z', address: 'z:1', electedAtMs: 1 };
    await writeFile(HaPaths.leader(haDir), JSON.stringify(newer));

    expect(await a.confirmLeadership()).toBe(false);
    expect(await la.nextRevoke(0)).toMatch(/newer leader z at z:1 holds epoch 7/);
    expect(await readLeader(haDir)).toEqual(newer);
    // It gave its lease up so that the real leader's side can proceed.
    await expect(stat(HaPaths.lockDir(haDir))).rejects.toThrow();
  });

  it('rewrites leader.json when an older record was put back while it holds the lease', async () => {
    await mkdir(HaPaths.epochsDir(haDir));
    await writeFile(join(HaPaths.epochsDir(haDir), '000000000005'), '');
    const a = contender('a', lease('10 s', '1 h', '1 h'));
    await a.start(new RecordingContender());
    expect(a.currentEpoch()).toBe(6);
    await writeFile(
      HaPaths.leader(haDir),
      JSON.stringify({ epoch: 3, jobmasterId: 'old', address: 'old:1', electedAtMs: 1 }),
    );
    expect(await a.confirmLeadership()).toBe(true);
    expect(await readLeader(haDir)).toMatchObject({ epoch: 6, jobmasterId: 'a', address: 'a:9000' });
  });

  it('gives leadership up when grantLeadership fails', async () => {
    const listener = new RecordingContender(() => {
      throw new Error('port in use');
    });
    const a = contender('a', lease('10 s', '1 h', '1 h'));
    await a.start(listener);
    expect(await listener.nextRevoke(0)).toBe('grantLeadership failed: port in use');
    expect(a.hasLeadership()).toBe(false);
    await expect(stat(HaPaths.lockDir(haDir))).rejects.toThrow();
  });
});
