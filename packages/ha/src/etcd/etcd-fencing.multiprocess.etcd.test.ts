import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Configuration } from '@rebound/core';
import { createHaServices } from '../ha-services-factory.js';
import { ContenderProcess } from '../testing/contender-process.js';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '../testing/etcd-cluster.js';

const here = dirname(fileURLToPath(import.meta.url));
const script = join(here, '..', 'testing', 'etcd-contender.ts');

const available = etcdAvailable();
if (!available && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );

/** One contender process on etcd. */
class Contender extends ContenderProcess {
  constructor(id: string, endpoints: string, clusterId: string, storageDir: string) {
    super(id, script, [endpoints, clusterId, id, storageDir], { stdin: true });
  }

  kill(): void {
    this.proc.kill('SIGCONT');
    this.proc.kill('SIGKILL');
  }
}

describe.skipIf(!available)('etcd fencing across processes', () => {
  let etcd: EtcdCluster;
  let storage: string;
  const procs: Contender[] = [];

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1 });
    storage = await mkdtemp(join(tmpdir(), 'rebound-etcd-fencing-'));
  });
  afterAll(async () => {
    for (const p of procs) p.kill();
    await etcd?.stopAll();
    if (storage) await rm(storage, { recursive: true, force: true });
  });

  it('a SIGSTOPped leader resumed after a new one was elected is revoked and cannot write', async () => {
    const clusterId = `fencing-${process.pid}`;
    const spawnContender = (id: string): Contender => {
      const c = new Contender(id, etcd.endpointList, clusterId, storage);
      procs.push(c);
      return c;
    };
    const jmA = spawnContender('jm-a');
    const granted = await jmA.line(/^GRANTED \d+$/, 0, 60_000);
    const epochA = Number(granted.split(' ')[1]);
    await jmA.line(/^STORED /, 0, 30_000);
    const jmB = spawnContender('jm-b');
    await jmB.line(/^STARTED$/, 0, 60_000);

    jmA.proc.kill('SIGSTOP');
    const grantedB = await jmB.line(/^GRANTED \d+$/, 0, 30_000);
    const epochB = Number(grantedB.split(' ')[1]);
    expect(epochB).toBeGreaterThan(epochA);

    const seen = jmA.lines.length;
    jmA.proc.kill('SIGCONT');
    // A's own deadline passed while it was stopped: it steps down without being told.
    await jmA.line(/^REVOKED /, seen, 30_000);
    // And etcd refuses whatever it still tries to write under its old epoch.
    jmA.proc.stdin!.write('WRITE\n');
    const refused = await jmA.line(/^WRITE-/, seen, 30_000);
    expect(refused).toMatch(new RegExp(`^WRITE-REFUSED .*epoch ${epochA} no longer leads`));
    jmB.proc.stdin!.write('WRITE\n');
    expect(await jmB.line(/^WRITE-/, 0, 30_000)).toBe('WRITE-OK');

    const ha = createHaServices(
      Configuration.of({
        'high-availability.type': 'etcd',
        'high-availability.etcd.endpoints': etcd.endpointList,
        'high-availability.cluster-id': clusterId,
      }),
      storage,
    );
    try {
      expect(await ha.getLeader()).toMatchObject({ jobmasterId: 'jm-b', epoch: epochB });
      const store = ha.jobGraphStore();
      expect(await store.getJobAttachment(`job-jm-a-${epochA}`, 'written-by')).toBeUndefined();
      expect(Buffer.from((await store.getJobAttachment(`job-jm-b-${epochB}`, 'written-by'))!).toString()).toBe('jm-b');
    } finally {
      await ha.close();
    }
  });

  it("a standby that takes over a SIGKILLed leader's expired key knows when that leader was last heard of; after a clean step-down it reports none", async () => {
    const clusterId = `last-heard-${process.pid}`;
    const a = new Contender('jm-a', etcd.endpointList, clusterId, storage);
    procs.push(a);
    await a.line(/^GRANTED \d+$/, 0, 60_000);
    expect(await a.line(/^LAST-HEARD /, 0, 30_000)).toBe('LAST-HEARD none');
    const b = new Contender('jm-b', etcd.endpointList, clusterId, storage);
    procs.push(b);
    await b.line(/^STARTED$/, 0, 60_000);
    const killedAt = Date.now();
    a.kill();
    await b.line(/^GRANTED \d+$/, 0, 30_000);
    const heard = Number((await b.line(/^LAST-HEARD /, 0, 30_000)).split(' ')[1]);
    // a renewed every 300 ms until the kill; b saw the 2 s lease run out and subtracted it.
    expect(heard).toBeLessThanOrEqual(killedAt + 3_000);
    expect(heard).toBeGreaterThanOrEqual(killedAt - 3_000);

    const c = new Contender('jm-c', etcd.endpointList, clusterId, storage);
    procs.push(c);
    await c.line(/^STARTED$/, 0, 60_000);
    b.proc.kill('SIGTERM');
    await c.line(/^GRANTED \d+$/, 0, 30_000);
    expect(await c.line(/^LAST-HEARD /, 0, 30_000)).toBe('LAST-HEARD none');
  });

  it("a process's endpoint is listed while it lives and is gone a lease timeout after its SIGKILL", async () => {
    const clusterId = `endpoints-${process.pid}`;
    const tm = new Contender('tm-x', etcd.endpointList, clusterId, storage);
    procs.push(tm);
    await tm.line(/^STARTED$/, 0, 60_000);
    tm.proc.stdin!.write('PUBLISH\n');
    await tm.line(/^PUBLISHED$/, 0, 30_000);
    const ha = createHaServices(
      Configuration.of({
        'high-availability.type': 'etcd',
        'high-availability.etcd.endpoints': etcd.endpointList,
        'high-availability.cluster-id': clusterId,
      }),
      storage,
    );
    try {
      const registry = ha.endpoints();
      expect((await registry.list()).map((e) => [e.id, e.pid])).toEqual([['tm-x', tm.proc.pid]]);
      expect(registry.alive((await registry.read('tm-x'))!)).toBe(true);
      tm.kill();
      // Nobody withdrew it: only the end of its lease (2 s, no more keep-alives) removes it.
      const deadline = Date.now() + 30_000;
      while ((await registry.read('tm-x')) !== undefined) {
        if (Date.now() > deadline) throw new Error('the endpoint of a killed process is still listed after 30 s');
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(await registry.list()).toEqual([]);
    } finally {
      await ha.close();
    }
  });
});
