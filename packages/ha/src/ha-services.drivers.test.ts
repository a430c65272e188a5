import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Configuration, ErrorCode, type JobGraph, JobNotFoundError, ReboundError, silentLogger } from '@rebound/core';
import { EtcdHaServices } from './etcd/etcd-ha-services.js';
import { HaPaths } from './file/ha-dir.js';
import type { HighAvailabilityServices, LeaderElection } from './ha-services.js';
import { createHaServices } from './ha-services-factory.js';
import type { LeaderInfo } from './leader-info.js';
import { type EtcdCluster, startEtcdCluster } from './testing/etcd-cluster.js';
import { RecordingContender } from './testing/recording-contender.js';

/**
 * The behaviour both HA backends share, run against each driver. The file half runs with the unit
 * tests; the etcd half needs a real etcd and runs under `npm run test:etcd`, which sets
 * REBOUND_HA_DRIVER_TESTS=etcd (test/etcd/vitest.config.ts). Backend-specific behaviour (lease
 * directory races, steppedDown marks, watch reconnects) stays in each backend's own tests.
 */
interface Backend {
  readonly name: 'file' | 'etcd';
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  /** A fresh HA services object on one shared cluster state; `extra` overrides configuration. */
  services(extra?: Record<string, string>): HighAvailabilityServices;
  /** A new, empty cluster state (a new HA directory or etcd cluster id). */
  reset(): Promise<void>;
  /** Takes the lease away behind the leader's back (as when it was paused past it). */
  stealLease(ha: HighAvailabilityServices): Promise<void>;
}

const LEASE = {
  'high-availability.lease.timeout': '2 s',
  'high-availability.lease.renew-interval': '300 ms',
  'high-availability.lease.poll-interval': '50 ms',
};

function fileBackend(): Backend {
  let haDir = '';
  const dirs: string[] = [];
  return {
    name: 'file',
    async setUp() {},
    async tearDown() {
      await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
    },
    async reset() {
      haDir = await mkdtemp(join(tmpdir(), 'rebound-ha-drivers-'));
      dirs.push(haDir);
    },
    services: (extra) => createHaServices(Configuration.of({ ...LEASE, ...extra }), haDir),
    async stealLease() {
      await rm(HaPaths.lockDir(haDir), { recursive: true, force: true });
    },
  };
}

function etcdBackend(): Backend {
  let etcd: EtcdCluster | undefined;
  let storage = '';
  let clusterId = '';
  let seq = 0;
  return {
    name: 'etcd',
    async setUp() {
      etcd = await startEtcdCluster({ members: 1 });
      storage = await mkdtemp(join(tmpdir(), 'rebound-ha-drivers-etcd-'));
    },
    async tearDown() {
      await etcd?.stopAll();
      await rm(storage, { recursive: true, force: true });
    },
    async reset() {
      clusterId = `d${process.pid}-${++seq}`;
    },
    services: (extra) =>
      createHaServices(
        Configuration.of({
          ...LEASE,
          ...extra,
          'high-availability.type': 'etcd',
          'high-availability.etcd.endpoints': etcd!.endpointList,
          'high-availability.cluster-id': clusterId,
          'high-availability.storageDir': storage,
          'high-availability.etcd.request-timeout': '3 s',
        }),
        storage,
      ),
    async stealLease(ha) {
      await (ha as EtcdHaServices).connection.client.delete().key(`/${clusterId}/leader`);
    },
  };
}

const wanted = (process.env.REBOUND_HA_DRIVER_TESTS ?? 'file').split(',');
const backends = [fileBackend(), etcdBackend()].filter((b) => wanted.includes(b.name));

const graph = (jobId: string, submittedAtMs: number): JobGraph => ({
  job_id: jobId,
  name: `job ${jobId}`,
  submitted_at_ms: submittedAtMs,
});

describe.each(backends)('HA services on the $name driver', (backend) => {
  const open: HighAvailabilityServices[] = [];
  const elections: LeaderElection[] = [];

  beforeAll(() => backend.setUp());
  afterAll(() => backend.tearDown());
  afterEach(async () => {
    await Promise.all(elections.splice(0).map((e) => e.stop()));
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  async function services(extra?: Record<string, string>): Promise<HighAvailabilityServices> {
    const s = backend.services(extra);
    open.push(s);
    return s;
  }

  function contend(ha: HighAvailabilityServices, id: string): LeaderElection {
    const e = ha.createLeaderElectionService({ contenderId: id, address: `${id}:9000`, logger: silentLogger() });
    elections.push(e);
    return e;
  }

  it('one of several racing contenders leads; epochs strictly increase over hand-overs', async () => {
    await backend.reset();
    const all = await Promise.all(
      ['a', 'b', 'c'].map(async (id) => ({
        id,
        election: contend(await services(), id),
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
      const reader = await services();
      expect(await reader.getLeader()).toMatchObject({ epoch, jobmasterId: leader.id, address: `${leader.id}:9000` });
      expect(await reader.leaderEpochSource()()).toBe(epoch);
      // Nobody took an expired lease over: there is no previous leader to date.
      expect(leader.election.previousLeaderLastHeardMs()).toBeUndefined();
      running = running.filter((x) => x !== leader);
      await leader.election.stop();
      expect(leader.contender.revocations()).toEqual(['leader election service stopped']);
    }
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]!).toBeGreaterThan(epochs[i - 1]!);
  });

  it('a leader whose lease was taken away learns it, and a newer epoch leads', async () => {
    await backend.reset();
    // The file leader does not renew by itself here: it must not win the lock back before b.
    const haA = await services({ 'high-availability.lease.renew-interval': '1 h' });
    const a = contend(haA, 'a');
    const ra = new RecordingContender();
    await a.start(ra);
    const epochA = await ra.nextGrant(0);
    const b = contend(await services(), 'b');
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
    const a = contend(await services(), 'a');
    const listener = new RecordingContender(() => {
      throw new Error('port in use');
    });
    await a.start(listener);
    expect(await listener.nextRevoke(0)).toBe('grantLeadership failed: port in use');
    expect(a.hasLeadership()).toBe(false);
  });

  it('followers see each new leader in order and wait for the first one', async () => {
    await backend.reset();
    const follower = await services();
    const retrieval = follower.createLeaderRetrievalService(silentLogger());
    await expect(retrieval.waitForLeader(300)).rejects.toSatisfy(
      (e: unknown) => e instanceof ReboundError && e.code === ErrorCode.LEADER_NOT_FOUND,
    );
    const seen: LeaderInfo[] = [];
    retrieval.start({ onLeaderChange: (info) => void seen.push(info) });
    const waiting = retrieval.waitForLeader(10_000);
    const a = contend(await services(), 'a');
    const ra = new RecordingContender();
    await a.start(ra);
    expect(await waiting).toMatchObject({ jobmasterId: 'a', epoch: await ra.nextGrant(0) });
    const b = contend(await services(), 'b');
    const rb = new RecordingContender();
    await b.start(rb);
    await a.stop();
    const epochB = await rb.nextGrant(0);
    await expect.poll(() => retrieval.current()?.epoch, { timeout: 10_000 }).toBe(epochB);
    expect(seen.map((l) => l.jobmasterId)).toEqual(['a', 'b']);
    expect(await retrieval.refresh()).toMatchObject({ jobmasterId: 'b', address: 'b:9000' });
    retrieval.stop();
  });

  it('stores jobs for the leader: graph, status, attachments, listings and retention', async () => {
    await backend.reset();
    const ha = await services();
    const a = contend(ha, 'a');
    const ra = new RecordingContender();
    await a.start(ra);
    const store = ha.leaderJobGraphStore(await ra.nextGrant(0));
    const bundle = new TextEncoder().encode('export default {}');
    await store.putJob(graph('j-old', 1), bundle);
    await store.putJob(graph('j-new', 2), bundle);
    const reader = (await services()).jobGraphStore();
    expect(await reader.listJobIds()).toEqual(['j-new', 'j-old']);
    expect((await reader.getJob('j-old')).graph).toMatchObject({ job_id: 'j-old', name: 'job j-old' });
    await expect(reader.getJob('j-none')).rejects.toBeInstanceOf(JobNotFoundError);
    await expect(reader.getJob('../etc')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await reader.hasJob('../etc')).toBe(false);

    await store.putJobAttachment('j-old', 'recoveries.json', '[]');
    await expect(store.putJobAttachment('j-old', '../x', '1')).rejects.toThrow(/not a plain file name/);
    await expect(store.putJobAttachment('j-none', 'x', '1')).rejects.toBeInstanceOf(JobNotFoundError);
    expect(await reader.listJobAttachments('j-old')).toEqual(['recoveries.json']);
    expect(Buffer.from((await reader.getJobAttachment('j-old', 'recoveries.json'))!).toString()).toBe('[]');
    expect(await reader.getJobAttachment('j-old', 'none')).toBeUndefined();

    await expect(store.markTerminal('j-old', { state: 'RUNNING' as 'FINISHED', finishedAtMs: 1 })).rejects.toThrow(
      /not a terminal job state/,
    );
    await store.markTerminal('j-old', { state: 'FINISHED', finishedAtMs: 100 });
    expect(await reader.getTerminalStatus('j-old')).toEqual({ state: 'FINISHED', finishedAtMs: 100 });
    expect(await reader.listUnfinishedJobs()).toEqual([{ jobId: 'j-new' }]);
    expect((await reader.listJobs()).map((j) => [j.jobId, j.status?.state])).toEqual([
      ['j-old', 'FINISHED'],
      ['j-new', undefined],
    ]);

    expect(await store.removeExpiredJobs(150, 100)).toEqual([]);
    expect(await store.removeExpiredJobs(200, 100)).toEqual(['j-old']);
    expect(await reader.listJobIds()).toEqual(['j-new']);
    await expect(reader.getTerminalStatus('j-old')).rejects.toBeInstanceOf(JobNotFoundError);
  });
});
