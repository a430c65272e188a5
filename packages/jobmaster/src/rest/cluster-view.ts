import type { EndpointRegistry, HighAvailabilityServices, ProcessEndpoint } from '@rebound/ha';
import type { LeaderView } from './leader-view.js';

export interface ClusterJobMaster {
  id: string;
  address: string;
  restUrl: string | null;
  leader: boolean;
  /** null: not knowable from here (another host). */
  alive: boolean | null;
  startedAtMs: number;
}

export interface ClusterTaskManager {
  id: string;
  address: string;
  metricsUrl: string | null;
  /** null when the answering JobMaster is not the leader (only the leader knows registrations). */
  registered: boolean | null;
  alive: boolean | null;
  slotsTotal: number;
  slotsFree: number;
  lastHeartbeatMs: number;
  /** Jobs it reported retained partitions of when it last registered. */
  retainedJobs: string[];
  /** Finished partitions of running jobs the leader tracks on it. */
  partitions: number;
  partitionBytes: number;
}

export interface ClusterShuffleWorker {
  id: string;
  address: string;
  metricsUrl: string | null;
  registered: boolean | null;
  alive: boolean | null;
  lastHeartbeatMs: number;
  /** What the worker said it holds in its last heartbeat (all jobs). */
  partitions: number;
  partitionBytes: number;
}

export interface ClusterView {
  now: number;
  /** The JobMaster that answered, and whether it leads. */
  answeredBy: { id: string; leader: boolean };
  leader: { jobmasterId: string; epoch: number; address: string; electedAtMs: number; restUrl: string | null } | null;
  epoch: number;
  jobmasters: ClusterJobMaster[];
  taskmanagers: ClusterTaskManager[];
  shuffleWorkers: ClusterShuffleWorker[];
  partitions: { retained: number; bytes: number };
}

/**
 * `GET /cluster`: what any JobMaster can tell from the HA directory (leader, epoch, every
 * process's endpoints) plus, on the leader, registrations, slots and tracked partitions. Answered
 * locally on a standby too: during a failover it is how the dashboard finds the next leader.
 */
export async function clusterView(
  ha: HighAvailabilityServices,
  selfId: string,
  leader: LeaderView | undefined,
  now: number,
  registry: EndpointRegistry = ha.endpoints(),
): Promise<ClusterView> {
  const [info, endpoints] = await Promise.all([
    ha.getLeader().catch(() => undefined),
    registry.list().catch((): ProcessEndpoint[] => []),
  ]);
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  const jobmasters: ClusterJobMaster[] = endpoints
    .filter((e) => e.role === 'jobmaster')
    .map((e) => ({
      id: e.id,
      address: e.address,
      restUrl: e.restUrl ?? null,
      leader: info?.jobmasterId === e.id,
      alive: e.id === selfId ? true : (registry.alive(e) ?? null),
      startedAtMs: e.startedAtMs,
    }));
  const registered = new Map((leader?.registry.overview() ?? []).map((t) => [t.task_manager_id ?? '', t]));
  const tracked = leader?.trackedPartitions() ?? new Map<string, { partitions: number; bytes: number }>();
  const tmIds = [
    ...new Set([...endpoints.filter((e) => e.role === 'taskmanager').map((e) => e.id), ...registered.keys()]),
  ].sort();
  const taskmanagers: ClusterTaskManager[] = tmIds.map((id) => {
    const ep = byId.get(id);
    const reg = registered.get(id);
    const t = tracked.get(id);
    return {
      id,
      address: reg?.address ?? ep?.address ?? '',
      metricsUrl: ep?.metricsUrl ?? null,
      registered: leader ? reg !== undefined : null,
      alive: ep ? (registry.alive(ep) ?? null) : null,
      slotsTotal: Number(reg?.slots_total ?? 0),
      slotsFree: Number(reg?.slots_free ?? 0),
      lastHeartbeatMs: Number(reg?.last_heartbeat_ms ?? 0),
      retainedJobs: [...(leader?.retainedJobsAtRegistration.get(id) ?? [])],
      partitions: t?.partitions ?? 0,
      partitionBytes: t?.bytes ?? 0,
    };
  });
  const workers = new Map((leader?.shuffleWorkerOverview() ?? []).map((w) => [w.id, w]));
  const workerIds = [
    ...new Set([...endpoints.filter((e) => e.role === 'shuffle-worker').map((e) => e.id), ...workers.keys()]),
  ].sort();
  const shuffleWorkers: ClusterShuffleWorker[] = workerIds.map((id) => {
    const ep = byId.get(id);
    const w = workers.get(id);
    return {
      id,
      address: w?.address ?? ep?.address ?? '',
      metricsUrl: ep?.metricsUrl ?? null,
      registered: leader ? w !== undefined : null,
      alive: ep ? (registry.alive(ep) ?? null) : null,
      lastHeartbeatMs: w?.lastHeartbeatMs ?? 0,
      partitions: w?.partitions ?? 0,
      partitionBytes: w?.bytes ?? 0,
    };
  });
  return {
    now,
    answeredBy: { id: selfId, leader: leader !== undefined },
    leader: info
      ? {
          jobmasterId: info.jobmasterId,
          epoch: info.epoch,
          address: info.address,
          electedAtMs: info.electedAtMs,
          restUrl: byId.get(info.jobmasterId)?.restUrl ?? null,
        }
      : null,
    epoch: leader?.epoch ?? info?.epoch ?? 0,
    jobmasters,
    taskmanagers,
    shuffleWorkers,
    partitions: {
      retained:
        taskmanagers.reduce((s, t) => s + t.partitions, 0) + shuffleWorkers.reduce((s, w) => s + w.partitions, 0),
      bytes:
        taskmanagers.reduce((s, t) => s + t.partitionBytes, 0) +
        shuffleWorkers.reduce((s, w) => s + w.partitionBytes, 0),
    },
  };
}
