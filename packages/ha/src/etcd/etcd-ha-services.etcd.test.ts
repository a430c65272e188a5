import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { Configuration, silentLogger } from '@rebound/core';
import { createHaServices } from '../ha-services-factory.js';
import type { LeaderInfo } from '../leader-info.js';
import { EtcdHaServices } from './etcd-ha-services.js';
import {
  Recorder,
  available,
  closeServices,
  clusterId,
  etcd,
  newCluster,
  open,
  services,
  startEtcd,
  stopEtcd,
  storage,
  until,
} from './etcd-ha-services.test-util.js';

describe.skipIf(!available)('etcd HA services (real etcd)', () => {
  beforeAll(startEtcd);
  afterAll(stopEtcd);
  afterEach(closeServices);

  it('elects one leader, whose epoch is the leader key create revision; a standby takes over when it stops', async () => {
    newCluster();
    const a = services();
    const b = services();
    const ra = new Recorder();
    const rb = new Recorder();
    const ea = a.createLeaderElectionService({ contenderId: 'jm-a', address: '127.0.0.1:1', logger: silentLogger() });
    const eb = b.createLeaderElectionService({ contenderId: 'jm-b', address: '127.0.0.1:2', logger: silentLogger() });
    await ea.start(ra);
    await ra.until('jm-a leads', () => ra.grants.length === 1);
    await eb.start(rb);
    const epochA = ra.grants[0]!;
    expect(ea.currentEpoch()).toBe(epochA);
    expect(eb.hasLeadership()).toBe(false);
    expect(await a.getLeader()).toMatchObject({ epoch: epochA, jobmasterId: 'jm-a', address: '127.0.0.1:1' });
    expect(await b.leaderEpochSource()()).toBe(epochA);

    await ea.stop();
    expect(ra.revokes).toEqual(['leader election service stopped']);
    // Revoking the lease deleted the key: the standby's watch fires at once, no lease timeout.
    await rb.until('jm-b leads', () => rb.grants.length === 1, 10_000);
    expect(rb.grants[0]!).toBeGreaterThan(epochA);
    expect(await b.getLeader()).toMatchObject({ epoch: rb.grants[0], jobmasterId: 'jm-b' });
    await eb.stop();
  });

  it('epochs strictly increase over re-elections, including re-elections of the same contender', async () => {
    newCluster();
    const epochs: number[] = [];
    for (let i = 0; i < 4; i++) {
      const s = services();
      const r = new Recorder();
      const e = s.createLeaderElectionService({
        contenderId: `jm-${i % 2}`,
        address: `127.0.0.1:${i + 1}`,
        logger: silentLogger(),
      });
      await e.start(r);
      await r.until(`election ${i}`, () => r.grants.length === 1);
      epochs.push(r.grants[0]!);
      // Unrelated writes in between move the revision on; epochs must still only grow.
      await (s as EtcdHaServices).connection.client.put(`/${clusterId}/noise`).value(String(i));
      await e.stop();
    }
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]!).toBeGreaterThan(epochs[i - 1]!);
  });

  it('loses leadership before its lease can expire when keep-alives stop reaching etcd', async () => {
    newCluster();
    const a = services({ timeout: '2 s', renew: '300 ms' });
    const ra = new Recorder();
    const ea = a.createLeaderElectionService({ contenderId: 'jm-a', address: '127.0.0.1:1', logger: silentLogger() });
    await ea.start(ra);
    await ra.until('jm-a leads', () => ra.grants.length === 1);
    const t0 = performance.now();
    await etcd.killMember(0);
    try {
      await ra.until('leadership revoked while etcd is down', () => ra.revokes.length === 1, 10_000);
      // Revoked before the 2 s lease could have run out in etcd (it started after our last keep-alive was sent).
      expect(performance.now() - t0).toBeLessThan(2_000);
      expect(ea.hasLeadership()).toBe(false);
      expect(ea.currentEpoch()).toBeUndefined();
    } finally {
      await etcd.startMember(0);
    }
    // Once etcd is back the contender campaigns again and leads under a newer epoch.
    await ra.until('re-elected after etcd returned', () => ra.grants.length === 2, 30_000);
    expect(ra.grants[1]!).toBeGreaterThan(ra.grants[0]!);
    await ea.stop();
  });

  it('TaskManagers and clients follow the leader by watch', async () => {
    newCluster();
    const follower = services();
    const retrieval = follower.createLeaderRetrievalService(silentLogger());
    const seen: LeaderInfo[] = [];
    retrieval.start({ onLeaderChange: (info) => void seen.push(info) });
    const waiting = retrieval.waitForLeader(20_000);
    const a = services();
    const ra = new Recorder();
    const ea = a.createLeaderElectionService({ contenderId: 'jm-a', address: '127.0.0.1:1', logger: silentLogger() });
    await ea.start(ra);
    await ra.until('jm-a leads', () => ra.grants.length === 1);
    expect(await waiting).toMatchObject({ jobmasterId: 'jm-a', epoch: ra.grants[0] });
    const b = services();
    const rb = new Recorder();
    const eb = b.createLeaderElectionService({ contenderId: 'jm-b', address: '127.0.0.1:2', logger: silentLogger() });
    await eb.start(rb);
    await ea.stop();
    await rb.until('jm-b leads', () => rb.grants.length === 1);
    await until('the follower saw jm-b', () => seen.some((l) => l.jobmasterId === 'jm-b'), 10_000);
    expect(seen.map((l) => l.jobmasterId)).toEqual(['jm-a', 'jm-b']);
    expect(retrieval.current()).toMatchObject({ jobmasterId: 'jm-b', epoch: rb.grants[0] });
    retrieval.stop();
    await eb.stop();
  });

  it('names the endpoints and the key to fix when etcd is unreachable, within the request timeout', async () => {
    newCluster();
    const config = Configuration.of({
      'high-availability.type': 'etcd',
      'high-availability.etcd.endpoints': 'http://127.0.0.1:1',
      'high-availability.cluster-id': clusterId,
      'high-availability.etcd.request-timeout': '1 s',
    });
    const s = createHaServices(config, storage);
    open.push(s);
    const t0 = Date.now();
    await expect(s.assertUsable()).rejects.toThrow(/http:\/\/127\.0\.0\.1:1.*high-availability\.etcd\.endpoints/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(() => createHaServices(Configuration.of({ 'high-availability.type': 'etcd' }), storage)).toThrow(
      /high-availability\.etcd\.endpoints is empty/,
    );
  });

  it('endpoints: withdrawn at once, and published again under a new lease when etcd drops the old one', async () => {
    newCluster();
    const a = services();
    const reader = services();
    await a.endpoints().publish({
      id: 'jm-1',
      role: 'jobmaster',
      address: '127.0.0.1:1',
      restUrl: 'http://127.0.0.1:8081',
      startedAtMs: 5,
    });
    await a.endpoints().publish({
      id: 'tm-1',
      role: 'taskmanager',
      address: '127.0.0.1:2',
      metricsUrl: 'http://127.0.0.1:9249',
      startedAtMs: 6,
    });
    expect((await reader.endpoints().list()).map((e) => e.id)).toEqual(['jm-1', 'tm-1']);
    expect(await reader.endpoints().read('jm-1')).toMatchObject({
      role: 'jobmaster',
      restUrl: 'http://127.0.0.1:8081',
      pid: process.pid,
    });

    // Revoked behind the publisher's back (as an etcd outage longer than the lease would do).
    const { kv } = await (reader as EtcdHaServices).connection.get(`/${clusterId}/endpoints/jm-1`);
    await (reader as EtcdHaServices).connection.client.leaseClient.leaseRevoke({ ID: kv!.lease });
    expect(await reader.endpoints().read('jm-1')).toBeUndefined();
    await until('both endpoints are back', async () => (await reader.endpoints().list()).length === 2, 15_000);
    const { kv: again } = await (reader as EtcdHaServices).connection.get(`/${clusterId}/endpoints/jm-1`);
    expect(again!.lease).not.toBe(kv!.lease);

    await a.endpoints().withdraw('tm-1');
    expect((await reader.endpoints().list()).map((e) => e.id)).toEqual(['jm-1']);
    await a.close();
    // Closing revokes the lease: a clean shutdown leaves no record behind.
    expect(await reader.endpoints().list()).toEqual([]);
  });
});
