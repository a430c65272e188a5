import { createHash } from 'node:crypto';

import { resolve } from 'node:path';
import {
  type ClusterOverview__Output,
  Configuration,
  checkHealth,
  errorMessage,
  HealthServices,
  LeaderNotFoundError,
  sleep,
  UnavailableError,
} from '@rebound/core';
import { createHaServices, type HighAvailabilityServices, type LeaderInfo } from '@rebound/ha';
import { ClusterClient } from '../client.js';
import type { ClusterTarget } from '../cluster-target.js';
import { type ClusterFile, type ClusterProcess } from '../cluster-file.js';

import { isProcessAlive } from '../processes.js';

// What the local commands share: the live processes of a cluster file, its HA services, waiting for a leader and for registrations.

const POLL_MS = 50;

export function aliveProcesses(file: ClusterFile): ClusterProcess[] {
  return file.processes.filter((p) => isProcessAlive(p.pid, p.id));
}

export function describeProcs(procs: readonly ClusterProcess[]): string {
  return procs.map((p) => `${p.id} pid ${p.pid}`).join(', ');
}

export function clusterTargetOf(workdir: string, file: ClusterFile): ClusterTarget {
  return { kind: 'cluster', workdir, haDir: resolve(workdir, file.haDir), file };
}

/** The HA services of a local cluster (its cluster.json names the backend); closed by the caller. */
export function haServicesOfFile(workdir: string, file: ClusterFile): HighAvailabilityServices {
  let config = Configuration.empty();
  try {
    config = Configuration.of({ ...file.config });
  } catch {
    // A cluster.json edited by hand with a bad value: the daemons reject it; look with defaults.
  }
  return createHaServices(config, resolve(workdir, file.haDir));
}

export async function withLocalHa<T>(
  workdir: string,
  file: ClusterFile,
  fn: (ha: HighAvailabilityServices) => Promise<T>,
): Promise<T> {
  const ha = haServicesOfFile(workdir, file);
  try {
    return await fn(ha);
  } finally {
    await ha.close();
  }
}

/**
 * A local cluster on etcd gets a key namespace of its own unless one is configured: derived from
 * the work directory, so `local down` then `local up` in the same directory finds its jobs again.
 */
export function localClusterId(workdir: string): string {
  return `local-${createHash('sha256').update(workdir).digest('hex').slice(0, 12)}`;
}

/** Polls the leader record until a leader newer than `afterEpoch` and (if given) one of `ids` leads. */
export async function waitForLeader(
  ha: HighAvailabilityServices,
  deadline: number,
  accept: (l: LeaderInfo) => boolean,
): Promise<LeaderInfo> {
  for (;;) {
    let problem = '';
    const leader = await ha.getLeader().catch((err: unknown) => {
      problem = errorMessage(err);
      return undefined;
    });
    if (leader && accept(leader)) return leader;
    if (Date.now() > deadline) {
      throw new LeaderNotFoundError(
        `no JobMaster was elected leader in time (${ha.describe()}: ${leader ? `${leader.jobmasterId}, epoch ${leader.epoch}` : problem || 'no leader recorded'}); see the logs of the JobMasters`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** Polls the leader's cluster overview until every TaskManager in `ids` is registered. */
export async function waitForRegistration(
  client: ClusterClient,
  ids: readonly string[],
  deadline: number,
): Promise<ClusterOverview__Output> {
  let last: ClusterOverview__Output | undefined;
  let lastError = '';
  for (;;) {
    try {
      last = await client.getClusterOverview({ failoverTimeoutMs: Math.max(0, deadline - Date.now()) });
      const registered = new Set(last.task_managers.map((t) => t.task_manager_id));
      if (ids.every((id) => registered.has(id))) return last;
    } catch (err) {
      lastError = errorMessage(err);
    }
    if (Date.now() > deadline) {
      const registered = last?.task_managers.map((t) => t.task_manager_id) ?? [];
      const missing = ids.filter((id) => !registered.includes(id));
      throw new UnavailableError(
        `TaskManagers ${missing.join(', ')} did not register with the leader in time${lastError ? ` (${lastError})` : ''}; see their logs`,
      );
    }
    await sleep(POLL_MS);
  }
}

/**
 * Whether a shuffle worker is registered with a leader: its gRPC health reads SERVING for
 * ShuffleWorkerService exactly then (the leader's cluster overview lists TaskManagers only).
 */
export async function shuffleWorkerRegistered(address: string, timeoutMs = 1_000): Promise<boolean> {
  if (!address) return false;
  const status = await checkHealth(address, HealthServices.shuffleWorker, timeoutMs).catch(() => undefined);
  return status === 'SERVING';
}

/** Polls each shuffle worker's health until every one is registered with the leader. */
export async function waitForShuffleWorkers(
  workers: readonly Pick<ClusterProcess, 'id' | 'address'>[],
  deadline: number,
): Promise<void> {
  let pending = [...workers];
  for (;;) {
    const registered = await Promise.all(pending.map((w) => shuffleWorkerRegistered(w.address)));
    pending = pending.filter((_, i) => !registered[i]);
    if (pending.length === 0) return;
    if (Date.now() > deadline) {
      throw new UnavailableError(
        `shuffle workers ${pending.map((w) => w.id).join(', ')} did not register with the leader in time; see their logs`,
      );
    }
    await sleep(POLL_MS);
  }
}
