import { JOB_EVENT_TYPE_NAMES, type JobEventType } from '@rebound/core';
import { Prng } from './prng.js';

/**
 * The fault menu. Each run draws its faults (kinds, times, targets) from its seed; a fault is
 * injected when its trigger fires (enough finished tasks, then a delay), except `crash-point`,
 * which is armed in the leading JobMaster's configuration before the job is submitted.
 */
export const FAULT_KINDS = [
  'leader-kill',
  'crash-point',
  'double-failure',
  'tm-kill-leaderless',
  'tm-kill-after-recovery',
  'leader-pause',
  'torn-tail',
  'flipped-byte',
  'partition-delete',
  'jobmasters-pause',
  'poison-job',
  'damaged-job-dir',
  'forged-rpc',
  'tm-partition',
  'leader-partition',
  'etcd-member-kill',
  'etcd-outage',
  'etcd-leader-partition',
] as const;

export type FaultKind = (typeof FAULT_KINDS)[number];

export const FAULT_DESCRIPTIONS: Readonly<Record<FaultKind, string>> = {
  'leader-kill': 'SIGKILL of the leading JobMaster at a random time',
  'crash-point': 'the leader dies at a debug.crash.* point (before/after an event, after a deploy)',
  'double-failure': 'leader SIGKILL, then the new leader dies while RECONCILING',
  'tm-kill-leaderless': 'SIGKILL of a TaskManager while no JobMaster leads',
  'tm-kill-after-recovery': 'leader SIGKILL, then a TaskManager SIGKILL once the job runs again',
  'leader-pause': 'the leader is SIGSTOPped, a new one is elected, then the old one SIGCONTed (it must be fenced)',
  'torn-tail': 'all JobMasters killed, the newest event file torn (truncated or zero-filled tail), then one started',
  'flipped-byte': 'all JobMasters killed, one byte of the newest event file flipped, then one started',
  'partition-delete': 'the data file of a retained, finished partition is deleted',
  'jobmasters-pause': 'every JobMaster SIGSTOPped past taskmanager.registration.timeout, then SIGCONTed',
  'poison-job': 'a second job whose module exits, throws or hangs when a JobMaster loads it is submitted mid-job',
  'damaged-job-dir':
    "a second, finished job's status.json or jobgraph.pb is overwritten with garbage, then the leader SIGKILLed",
  'forged-rpc':
    'forged calls (no or a wrong secret; the secret with a forged leader epoch) sent to the leader and a TaskManager mid-job',
  'tm-partition':
    'every packet in or out of one TaskManager dropped for a while (nft), then healed; shorter or longer than heartbeat.timeout',
  'leader-partition':
    'every packet in or out of the leading JobMaster dropped for a while (nft), then healed (on etcd it loses its lease and must be fenced)',
  'etcd-member-kill': 'SIGKILL of one etcd member (the Raft leader or a follower) mid-job, maybe restarted later',
  'etcd-outage': 'every etcd member SIGSTOPped or SIGKILLed for longer than the HA lease, then resumed or restarted',
  'etcd-leader-partition': "every packet in or out of etcd's Raft leader member dropped for a while (nft), then healed",
};

/** Where leader election and job graphs live (`high-availability.type`). */
export const HA_BACKENDS = ['file', 'etcd'] as const;
export type HaBackend = (typeof HA_BACKENDS)[number];

/** What a run can do to the cluster, besides killing and stopping its processes. */
export interface FaultEnvironment {
  readonly ha: HaBackend;
  /** Network partitions (nft drops by socket cgroup): root, nft and cgroup v2 (partition.ts). */
  readonly partitions: boolean;
}

/** Kinds that need an etcd cluster of the run's own (`--ha etcd`). */
export const ETCD_FAULTS: ReadonlySet<FaultKind> = new Set([
  'etcd-member-kill',
  'etcd-outage',
  'etcd-leader-partition',
]);
/** Kinds that drop network traffic (`--partitions`). */
export const PARTITION_FAULTS: ReadonlySet<FaultKind> = new Set([
  'tm-partition',
  'leader-partition',
  'etcd-leader-partition',
]);
/** Kinds that damage files of the file backend (on etcd, job graphs and status live in etcd). */
export const FILE_HA_FAULTS: ReadonlySet<FaultKind> = new Set(['damaged-job-dir']);

/** Why `kind` cannot run in `env`, or undefined if it can. */
export function faultUnavailable(kind: FaultKind, env: FaultEnvironment): string | undefined {
  if (ETCD_FAULTS.has(kind) && env.ha !== 'etcd') return `${kind} needs --ha etcd`;
  if (FILE_HA_FAULTS.has(kind) && env.ha !== 'file')
    return `${kind} damages the file backend's job directory; it has none on --ha ${env.ha}`;
  if (PARTITION_FAULTS.has(kind) && !env.partitions) return `${kind} needs --partitions`;
  return undefined;
}

/** The kinds a run in `env` draws from when no pool is given. */
export function faultKindsFor(env: FaultEnvironment): FaultKind[] {
  return FAULT_KINDS.filter((k) => faultUnavailable(k, env) === undefined);
}

/** What a poison job module does when a JobMaster loads it (packages/chaos/src/jobs/poison.ts). */
export const POISON_MODES = ['exit', 'throw', 'hang'] as const;
export type PoisonMode = (typeof POISON_MODES)[number];

/**
 * How a stored job file is damaged. Only damage that no reader can take for a valid file: a
 * protobuf cut at a field boundary still decodes (to a smaller graph), so truncation is not used.
 */
export const JOB_FILE_DAMAGE = {
  'status.json': ['torn', 'zeros', 'binary'],
  'jobgraph.pb': ['garbage', 'zeros'],
} as const;
export type DamagedJobFile = keyof typeof JOB_FILE_DAMAGE;
export type JobFileDamage = (typeof JOB_FILE_DAMAGE)[DamagedJobFile][number];

/** Kinds that shape the whole run (JobMaster configuration, registration timeout): never combined. */
export const EXCLUSIVE_FAULTS: ReadonlySet<FaultKind> = new Set(['crash-point', 'double-failure', 'jobmasters-pause']);

/** Kinds that attack the cluster without taking a leader down: they test containment, not recovery. */
export const NO_FAILOVER_FAULTS: ReadonlySet<FaultKind> = new Set(['poison-job', 'forged-rpc']);

export function isFaultKind(name: string): name is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(name);
}

/** When a fault fires: once the job counts `afterFinishedTasks` more finished tasks, plus `delayMs`. */
export interface Trigger {
  readonly afterFinishedTasks: number;
  readonly delayMs: number;
}

/** A crash point can follow any event the JobMaster writes (the one list is @rebound/core's). */
export const CRASH_EVENT_TYPES: readonly JobEventType[] = JOB_EVENT_TYPE_NAMES;
export type CrashEventType = JobEventType;

export type CrashPointSpec =
  | { readonly kind: 'before-event' | 'after-event'; readonly eventType: CrashEventType; readonly n: number }
  | { readonly kind: 'after-deploy'; readonly n: number }
  | { readonly kind: 'during-reconciling' };

export type FaultPlan =
  | { readonly kind: 'leader-kill'; readonly trigger: Trigger }
  | { readonly kind: 'crash-point'; readonly point: CrashPointSpec }
  | { readonly kind: 'double-failure'; readonly trigger: Trigger }
  | { readonly kind: 'tm-kill-leaderless'; readonly trigger: Trigger; readonly taskManager: number }
  | {
      readonly kind: 'tm-kill-after-recovery';
      readonly trigger: Trigger;
      readonly taskManager: number;
      readonly afterRecoveryMs: number;
    }
  | { readonly kind: 'leader-pause'; readonly trigger: Trigger; readonly resumeAfterMs: number }
  | {
      readonly kind: 'torn-tail';
      readonly trigger: Trigger;
      readonly mode: 'truncate' | 'zeros';
      readonly cutFraction: number;
    }
  | {
      readonly kind: 'flipped-byte';
      readonly trigger: Trigger;
      readonly positionFraction: number;
      readonly bit: number;
    }
  | {
      readonly kind: 'partition-delete';
      readonly trigger: Trigger;
      readonly pickFraction: number;
      readonly duringFailover: boolean;
    }
  | { readonly kind: 'jobmasters-pause'; readonly trigger: Trigger; readonly extraMs: number }
  | { readonly kind: 'poison-job'; readonly trigger: Trigger; readonly mode: PoisonMode }
  | {
      readonly kind: 'damaged-job-dir';
      readonly trigger: Trigger;
      readonly file: DamagedJobFile;
      readonly damage: JobFileDamage;
      readonly garbageSeed: number;
    }
  | { readonly kind: 'forged-rpc'; readonly trigger: Trigger; readonly taskManager: number; readonly orderSeed: number }
  | {
      readonly kind: 'tm-partition';
      readonly trigger: Trigger;
      readonly taskManager: number;
      readonly durationMs: number;
    }
  | { readonly kind: 'leader-partition'; readonly trigger: Trigger; readonly durationMs: number }
  | {
      readonly kind: 'etcd-member-kill';
      readonly trigger: Trigger;
      readonly member: 'leader' | 'follower';
      readonly restartAfterMs?: number;
    }
  | {
      readonly kind: 'etcd-outage';
      readonly trigger: Trigger;
      readonly mode: 'stop' | 'kill';
      readonly extraMs: number;
    }
  | { readonly kind: 'etcd-leader-partition'; readonly trigger: Trigger; readonly durationMs: number };

/** `debug.crash.*` settings of a crash point (debug.allow-test-options must be true as well). */
export function crashPointConfig(p: CrashPointSpec): Record<string, string> {
  switch (p.kind) {
    case 'before-event':
      return { 'debug.crash.before-event': `${p.eventType}:${p.n}` };
    case 'after-event':
      return { 'debug.crash.after-event': `${p.eventType}:${p.n}` };
    case 'after-deploy':
      return { 'debug.crash.after-deploy': String(p.n) };
    case 'during-reconciling':
      return { 'debug.crash.during-reconciling': 'true' };
  }
}

/** Clears every crash point: given to each JobMaster started after the first one. */
export const NO_CRASH_POINTS: Readonly<Record<string, string>> = {
  // `local start-jobmaster` checks its -D values on their own, before merging the cluster's.
  'debug.allow-test-options': 'true',
  'debug.crash.before-event': '',
  'debug.crash.after-event': '',
  'debug.crash.after-deploy': '0',
  'debug.crash.during-reconciling': 'false',
};

export function describeCrashPoint(p: CrashPointSpec): string {
  switch (p.kind) {
    case 'before-event':
    case 'after-event':
      return `${p.kind}=${p.eventType}:${p.n}`;
    case 'after-deploy':
      return `after-deploy=${p.n}`;
    case 'during-reconciling':
      return 'during-reconciling';
  }
}

/** One short line per planned fault, for tables and logs. */
export function describeFault(f: FaultPlan): string {
  const at = 'trigger' in f ? ` @${f.trigger.afterFinishedTasks}t+${f.trigger.delayMs}ms` : '';
  switch (f.kind) {
    case 'crash-point':
      return `crash-point(${describeCrashPoint(f.point)})`;
    case 'tm-kill-leaderless':
    case 'tm-kill-after-recovery':
      return `${f.kind}(tm-${f.taskManager})${at}`;
    case 'torn-tail':
      return `torn-tail(${f.mode})${at}`;
    case 'partition-delete':
      return `partition-delete${f.duringFailover ? '(failover)' : ''}${at}`;
    case 'poison-job':
      return `poison-job(${f.mode})${at}`;
    case 'damaged-job-dir':
      return `damaged-job-dir(${f.file}:${f.damage})${at}`;
    case 'forged-rpc':
      return `forged-rpc(tm-${f.taskManager})${at}`;
    case 'tm-partition':
      return `tm-partition(tm-${f.taskManager},${f.durationMs}ms)${at}`;
    case 'leader-partition':
    case 'etcd-leader-partition':
      return `${f.kind}(${f.durationMs}ms)${at}`;
    case 'etcd-member-kill':
      return `etcd-member-kill(${f.member}${f.restartAfterMs === undefined ? '' : `,restart+${f.restartAfterMs}ms`})${at}`;
    case 'etcd-outage':
      return `etcd-outage(${f.mode},lease+${f.extraMs}ms)${at}`;
    default:
      return `${f.kind}${at}`;
  }
}

/** What the planner needs to know about the job a run submits. */
export interface JobShape {
  /** Subtasks of all source vertices together (known before submission). */
  readonly sourceSubtasks: number;
  /** Job vertices (ExecutionJobVertexInitialized events of a fault-free run). */
  readonly vertices: number;
}

export interface PlanOptions {
  /** Kinds a run draws from (default: all). */
  readonly pool?: readonly FaultKind[];
  /** Faults per run; default: 1, or 2 with probability 0.3 (exclusive kinds always run alone). */
  readonly faultsPerRun?: number;
  /** Use this crash point instead of drawing one. */
  readonly crashPoint?: CrashPointSpec;
  readonly taskManagers?: number;
  /** The run's HA backend and whether it may cut the network: the default pool follows them. */
  readonly ha?: HaBackend;
  readonly partitions?: boolean;
}

/** The environment the options describe (file HA, no partitions unless said otherwise). */
export function environmentOf(opts: PlanOptions): FaultEnvironment {
  return { ha: opts.ha ?? 'file', partitions: opts.partitions ?? false };
}

function trigger(prng: Prng, maxTasks: number, maxDelayMs: number, minTasks = 0): Trigger {
  return {
    afterFinishedTasks: prng.int(Math.min(minTasks, maxTasks), Math.max(minTasks, maxTasks)),
    delayMs: prng.int(0, maxDelayMs),
  };
}

function drawCrashPoint(prng: Prng, shape: JobShape): CrashPointSpec {
  const r = prng.int(0, 4);
  if (r === 0) return { kind: 'after-deploy', n: prng.int(1, shape.sourceSubtasks + 1) };
  const eventType: CrashEventType = r <= 1 ? 'ExecutionJobVertexInitialized' : 'ExecutionVertexFinished';
  const n =
    eventType === 'ExecutionJobVertexInitialized' ? prng.int(1, shape.vertices) : prng.int(1, shape.sourceSubtasks + 1);
  return { kind: prng.chance(0.5) ? 'before-event' : 'after-event', eventType, n };
}

/**
 * Draws the faults of one run. `first` is whether the fault is the run's first: later faults
 * fire a few tasks after the previous fault was recovered from.
 */
export function drawFault(
  prng: Prng,
  kind: FaultKind,
  shape: JobShape,
  first: boolean,
  opts: PlanOptions = {},
): FaultPlan {
  const tms = opts.taskManagers ?? 3;
  // Leave a few source subtasks unfinished: the fault should land while the job still runs.
  const maxTasks = first ? Math.max(0, shape.sourceSubtasks - 3) : 2;
  switch (kind) {
    case 'leader-kill':
      return { kind, trigger: trigger(prng, maxTasks, 1000) };
    case 'crash-point':
      return { kind, point: opts.crashPoint ?? drawCrashPoint(prng, shape) };
    case 'double-failure':
      return { kind, trigger: trigger(prng, maxTasks, 1000) };
    case 'tm-kill-leaderless':
      return { kind, trigger: trigger(prng, maxTasks, 1000), taskManager: prng.int(1, tms) };
    case 'tm-kill-after-recovery':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000),
        taskManager: prng.int(1, tms),
        afterRecoveryMs: prng.int(0, 1500),
      };
    case 'leader-pause':
      return { kind, trigger: trigger(prng, maxTasks, 1000), resumeAfterMs: prng.int(0, 2000) };
    case 'torn-tail':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000, 1),
        mode: prng.chance(0.5) ? 'truncate' : 'zeros',
        cutFraction: prng.next(),
      };
    case 'flipped-byte':
      return { kind, trigger: trigger(prng, maxTasks, 1000, 1), positionFraction: prng.next(), bit: prng.int(0, 7) };
    case 'partition-delete':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 800, 1),
        pickFraction: prng.next(),
        duringFailover: prng.chance(0.5),
      };
    case 'jobmasters-pause':
      return { kind, trigger: trigger(prng, maxTasks, 1000), extraMs: prng.int(0, 1000) };
    case 'poison-job':
      return { kind, trigger: trigger(prng, maxTasks, 1000), mode: prng.pick(POISON_MODES) };
    case 'damaged-job-dir': {
      const file: DamagedJobFile = prng.chance(0.5) ? 'status.json' : 'jobgraph.pb';
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000),
        file,
        damage: prng.pick(JOB_FILE_DAMAGE[file]),
        garbageSeed: prng.int(1, 1_000_000),
      };
    }
    case 'forged-rpc':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000, 1),
        taskManager: prng.int(1, tms),
        orderSeed: prng.int(1, 1_000_000),
      };
    // Half the cuts end within heartbeat.timeout (3 s: nothing may be lost), half outlast it
    // (the leader may declare the TaskManager lost, like a kill).
    case 'tm-partition':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000, 1),
        taskManager: prng.int(1, tms),
        durationMs: prng.chance(0.5) ? prng.int(300, 2_000) : prng.int(4_500, 9_000),
      };
    // Below and beyond the etcd lease (3 s): the leader keeps or loses its leadership.
    case 'leader-partition':
      return { kind, trigger: trigger(prng, maxTasks, 1000, 1), durationMs: prng.int(1_000, 9_000) };
    case 'etcd-member-kill': {
      const member = prng.chance(0.5) ? 'leader' : 'follower';
      const restart = prng.chance(0.7);
      const restartAfterMs = prng.int(0, 4_000);
      return { kind, trigger: trigger(prng, maxTasks, 1000, 1), member, ...(restart ? { restartAfterMs } : {}) };
    }
    case 'etcd-outage':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000, 1),
        mode: prng.chance(0.5) ? 'stop' : 'kill',
        extraMs: prng.int(500, 3_000),
      };
    case 'etcd-leader-partition':
      return { kind, trigger: trigger(prng, maxTasks, 1000, 1), durationMs: prng.int(1_500, 8_000) };
  }
}

/** The fault kinds of one run, drawn from the pool. */
export function drawFaultKinds(prng: Prng, opts: PlanOptions = {}): FaultKind[] {
  const pool = opts.pool && opts.pool.length > 0 ? [...opts.pool] : faultKindsFor(environmentOf(opts));
  const count = opts.faultsPerRun ?? (prng.chance(0.3) ? 2 : 1);
  const first = prng.pick(pool);
  const kinds: FaultKind[] = [first];
  if (EXCLUSIVE_FAULTS.has(first)) return kinds;
  const combinable = pool.filter((k) => !EXCLUSIVE_FAULTS.has(k));
  for (let i = 1; i < count && combinable.length > 0; i++) {
    // Prefer a kind not drawn yet, so that a pool of two kinds with two faults per run runs both.
    const fresh = combinable.filter((k) => !kinds.includes(k));
    kinds.push(prng.pick(fresh.length > 0 ? fresh : combinable));
  }
  return kinds;
}
