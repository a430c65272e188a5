/** The REST documents the dashboard reads (the parts it uses). */
export type Counts = Record<string, number>;

export interface ClusterDoc {
  now: number;
  answeredBy: { id: string; leader: boolean };
  leader: { jobmasterId: string; epoch: number; address: string; electedAtMs: number; restUrl: string | null } | null;
  epoch: number;
  jobmasters: {
    id: string;
    address: string;
    restUrl: string | null;
    leader: boolean;
    alive: boolean | null;
    startedAtMs: number;
  }[];
  taskmanagers: {
    id: string;
    address: string;
    metricsUrl: string | null;
    registered: boolean | null;
    alive: boolean | null;
    slotsTotal: number;
    slotsFree: number;
    lastHeartbeatMs: number;
    retainedJobs: string[];
    partitions: number;
    partitionBytes: number;
  }[];
  /** Remote shuffle workers; absent from a JobMaster of an older version. */
  shuffleWorkers?: {
    id: string;
    address: string;
    registered: boolean | null;
    alive: boolean | null;
    lastHeartbeatMs: number;
    partitions: number;
    partitionBytes: number;
  }[];
  partitions: { retained: number; bytes: number };
}

export interface JobOverview {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  'end-time': number;
  duration: number;
  tasks: { total: number; finished: number; running: number; [k: string]: number };
}

export interface VertexInfo {
  id: string;
  name: string;
  parallelism: number;
  maxParallelism: number;
  status: string;
  tasks: Counts;
  metrics: Record<string, number | boolean>;
}

export interface JobDoc {
  jid: string;
  name: string;
  state: string;
  'start-time': number;
  'end-time': number;
  duration: number;
  now: number;
  vertices: VertexInfo[];
  'status-counts': Counts;
  plan: {
    nodes: { id: string; description: string; parallelism: number; inputs?: { id: string; ship_strategy: string }[] }[];
  };
  rebound: { leaderEpoch: number; restarts: number; failure: string; notes: string[]; recoveries: number };
}

export interface RecoveryRow {
  epoch: number;
  restartedFromScratch: boolean;
  reason: string;
  phases: {
    oldLeaderLastHeardMs: number;
    electedAtMs: number;
    replayStartedAtMs: number;
    replayFinishedAtMs: number;
    reconcileStartedAtMs: number;
    runningAtMs: number;
  };
  durations: { detectionMs: number; electedToReplayMs: number; replayMs: number; reconcileMs: number; totalMs: number };
  eventsReplayed: number;
  /** adopted: kept running through the failover (keep-running-tasks); absent from older JobMasters. */
  tasks: { reused: number; rerun: number; adopted?: number; finishedWhileLeaderless?: number };
  partitions: { reused: number; reusedBytes: number; released: number; releasedBytes: number; missing: number };
  tornTailBytesDiscarded: number;
}

export interface RecoveriesDoc {
  jid: string;
  recoveries: RecoveryRow[];
  inProgress: { epoch: number; electedAtMs: number; state: string } | null;
}

export interface EventsDoc {
  jid: string;
  total: number;
  offset: number;
  limit: number;
  events: { index: number; type: string; epoch: number; writtenAtMs: number; line: string }[];
}

export async function getJson<T>(url: string, timeoutMs = 3000): Promise<T> {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), timeoutMs);
  try {
    // credentials: the session cookie also goes to the other JobMasters' origins (failover).
    const res = await fetch(url, {
      signal: ctl.signal,
      credentials: 'include',
      headers: { accept: 'application/json' },
    });
    const body = (await res.json()) as T & { errors?: string[] };
    if (!res.ok) throw new Error(body.errors?.join('; ') ?? `HTTP ${res.status}`);
    return body;
  } finally {
    clearTimeout(timer);
  }
}

export function fmtBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export function fmtMs(ms: number): string {
  if (ms < 0) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}

export function fmtTime(ms: number): string {
  if (!ms || ms < 0) return '-';
  return new Date(ms).toISOString().slice(11, 23);
}
