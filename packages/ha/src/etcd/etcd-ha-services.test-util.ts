import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration, type JobGraph } from '@rebound/core';
import type { HighAvailabilityServices, LeaderContender } from '../ha-services.js';
import { createHaServices } from '../ha-services-factory.js';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '../testing/etcd-cluster.js';

export const available = etcdAvailable();
if (!available && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );

/** Records grants and revocations, and lets a test wait for either. */
export class Recorder implements LeaderContender {
  readonly events: string[] = [];
  grants: number[] = [];
  revokes: string[] = [];
  private waiters: (() => void)[] = [];
  grantLeadership(epoch: number): void {
    this.grants.push(epoch);
    this.events.push(`grant ${epoch}`);
    this.wake();
  }
  revokeLeadership(reason: string): void {
    this.revokes.push(reason);
    this.events.push(`revoke ${reason}`);
    this.wake();
  }
  private wake(): void {
    for (const w of this.waiters.splice(0)) w();
  }
  async until(what: string, cond: () => boolean, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!cond()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; events: ${this.events.join(' | ')}`);
      await new Promise<void>((r) => {
        const t = setTimeout(r, Math.min(left, 200));
        this.waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }
}

export async function until(what: string, cond: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export const graph = (jobId: string): JobGraph => ({ job_id: jobId, name: `job ${jobId}`, submitted_at_ms: 1 });

export let etcd: EtcdCluster;
export let storage: string;
export const open: HighAvailabilityServices[] = [];
let clusterSeq = 0;
export let clusterId = '';

/* Each file's describe takes these as its hooks, so that they are skipped with it where etcd is missing. */
export async function startEtcd(): Promise<void> {
  etcd = await startEtcdCluster({ members: 1 });
  storage = await mkdtemp(join(tmpdir(), 'rebound-etcd-storage-'));
}

export async function stopEtcd(): Promise<void> {
  await etcd?.stopAll();
  await rm(storage, { recursive: true, force: true });
}

export async function closeServices(): Promise<void> {
  await Promise.all(open.splice(0).map((s) => s.close()));
}

/** A new cluster id per test, so tests share one etcd without seeing each other's keys. */
export function newCluster(): void {
  clusterId = `t${process.pid}-${++clusterSeq}`;
}

export function services(
  lease = { timeout: '2 s', renew: '300 ms' },
  extra: Record<string, string> = {},
): HighAvailabilityServices {
  const config = Configuration.of({
    ...extra,
    'high-availability.type': 'etcd',
    'high-availability.etcd.endpoints': etcd.endpointList,
    'high-availability.cluster-id': clusterId,
    'high-availability.storageDir': storage,
    'high-availability.lease.timeout': lease.timeout,
    'high-availability.lease.renew-interval': lease.renew,
    'high-availability.lease.poll-interval': '200 ms',
    'high-availability.etcd.request-timeout': extra['high-availability.etcd.request-timeout'] ?? '3 s',
  });
  const s = createHaServices(config, storage);
  open.push(s);
  return s;
}
