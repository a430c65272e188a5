import { JOB_EVENT_TYPE_NAMES, type JobEventType } from '@rebound/core';

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
  'leader-and-tm-kill',
  'shuffle-worker-kill',
  'shuffle-worker-partition-damage',
  'malformed-credentials',
  'poison-runtime',
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
  'leader-and-tm-kill':
    'SIGKILL of the leading JobMaster and of a TaskManager together (a host dies); on remote shuffle no finished task may rerun',
  'shuffle-worker-kill':
    'SIGKILL of a shuffle worker (maybe while no leader runs), restarted later; only partitions no live replica holds are lost',
  'shuffle-worker-partition-damage':
    'a finished partition on a shuffle worker damaged (data deleted or one byte flipped), maybe while no leader runs',
  'malformed-credentials':
    'malformed credentials (gRPC metadata, Authorization, cookies, ?token=) sent to the leader and a TaskManager mid-job: each refused, no daemon hurt',
  'poison-runtime':
    'a second job whose enumerator or coordinator throws from a timer, exits, loops or allocates on the JobMaster is submitted mid-job: only it fails',
};

/** Where leader election and job graphs live (`high-availability.type`). */
export const HA_BACKENDS = ['file', 'etcd'] as const;
export type HaBackend = (typeof HA_BACKENDS)[number];

/** What a run can do to the cluster, besides killing and stopping its processes. */
export interface FaultEnvironment {
  readonly ha: HaBackend;
  /** Network partitions (nft drops by socket cgroup): root, nft and cgroup v2 (partition.ts). */
  readonly partitions: boolean;
  /** Shuffle workers of the run (0: TaskManager shuffle, partitions live on the TaskManagers). */
  readonly shuffleWorkers: number;
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
/** Kinds that attack the remote shuffle service (`--shuffle-workers`). */
export const SHUFFLE_WORKER_FAULTS: ReadonlySet<FaultKind> = new Set([
  'shuffle-worker-kill',
  'shuffle-worker-partition-damage',
]);
/** Kinds that damage partitions on a TaskManager's disk: on remote shuffle there are none. */
export const TASK_MANAGER_PARTITION_FAULTS: ReadonlySet<FaultKind> = new Set(['partition-delete']);

/** Why `kind` cannot run in `env`, or undefined if it can. */
export function faultUnavailable(kind: FaultKind, env: FaultEnvironment): string | undefined {
  if (ETCD_FAULTS.has(kind) && env.ha !== 'etcd') return `${kind} needs --ha etcd`;
  if (FILE_HA_FAULTS.has(kind) && env.ha !== 'file')
    return `${kind} damages the file backend's job directory; it has none on --ha ${env.ha}`;
  if (PARTITION_FAULTS.has(kind) && !env.partitions) return `${kind} needs --partitions`;
  if (SHUFFLE_WORKER_FAULTS.has(kind) && env.shuffleWorkers === 0) return `${kind} needs --shuffle-workers N (N >= 1)`;
  if (TASK_MANAGER_PARTITION_FAULTS.has(kind) && env.shuffleWorkers > 0)
    return `${kind} deletes a partition on a TaskManager; on remote shuffle (--shuffle-workers) use shuffle-worker-partition-damage`;
  return undefined;
}

/**
 * Kinds drawn by default only on remote-shuffle runs, so that recorded TaskManager-shuffle seeds
 * replay as before; asked for by name (`--faults`), leader-and-tm-kill runs on TaskManager
 * shuffle too, as the baseline that loses the dead TaskManager's finished work.
 */
const REMOTE_SHUFFLE_DEFAULTS: ReadonlySet<FaultKind> = new Set(['leader-and-tm-kill']);
/** Kinds drawn only when named in a pool (`--faults`): added to no default pool, so recorded seeds replay as before. */
export const BY_NAME_ONLY: ReadonlySet<FaultKind> = new Set(['malformed-credentials', 'poison-runtime']);

/** The kinds a run in `env` draws from when no pool is given. */
export function faultKindsFor(env: FaultEnvironment): FaultKind[] {
  return FAULT_KINDS.filter(
    (k) =>
      faultUnavailable(k, env) === undefined &&
      !BY_NAME_ONLY.has(k) &&
      (env.shuffleWorkers > 0 || !REMOTE_SHUFFLE_DEFAULTS.has(k)),
  );
}

/** What a poison job module does when a JobMaster loads it (packages/chaos/src/jobs/poison.ts). */
export const POISON_MODES = ['exit', 'throw', 'hang'] as const;
export type PoisonMode = (typeof POISON_MODES)[number];

/**
 * How the runtime poison job's code misbehaves on the JobMaster once its module loaded
 * (packages/chaos/src/jobs/poison-runtime.ts).
 */
export const POISON_RUNTIME_MODES = ['timer-throw', 'split-exit', 'coordinator-loop', 'split-alloc'] as const;
export type PoisonRuntimeMode = (typeof POISON_RUNTIME_MODES)[number];

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
export const NO_FAILOVER_FAULTS: ReadonlySet<FaultKind> = new Set([
  'poison-job',
  'forged-rpc',
  'malformed-credentials',
  'poison-runtime',
]);

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
  | { readonly kind: 'poison-runtime'; readonly trigger: Trigger; readonly mode: PoisonRuntimeMode }
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
  | { readonly kind: 'etcd-leader-partition'; readonly trigger: Trigger; readonly durationMs: number }
  | { readonly kind: 'leader-and-tm-kill'; readonly trigger: Trigger; readonly taskManager: number }
  | { readonly kind: 'malformed-credentials'; readonly trigger: Trigger; readonly taskManager: number }
  | {
      readonly kind: 'shuffle-worker-kill';
      readonly trigger: Trigger;
      readonly worker: number;
      readonly duringFailover: boolean;
      readonly restartAfterMs: number;
    }
  | {
      readonly kind: 'shuffle-worker-partition-damage';
      readonly trigger: Trigger;
      readonly pickFraction: number;
      readonly damage: 'delete' | 'flip';
      readonly positionFraction: number;
      readonly duringFailover: boolean;
    };

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
    case 'leader-and-tm-kill':
    case 'malformed-credentials':
      return `${f.kind}(tm-${f.taskManager})${at}`;
    case 'shuffle-worker-kill':
      return `shuffle-worker-kill(sw-${f.worker}${f.duringFailover ? ',failover' : ''},restart+${f.restartAfterMs}ms)${at}`;
    case 'shuffle-worker-partition-damage':
      return `shuffle-worker-partition-damage(${f.damage}${f.duringFailover ? ',failover' : ''})${at}`;
    case 'torn-tail':
      return `torn-tail(${f.mode})${at}`;
    case 'partition-delete':
      return `partition-delete${f.duringFailover ? '(failover)' : ''}${at}`;
    case 'poison-job':
    case 'poison-runtime':
      return `${f.kind}(${f.mode})${at}`;
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
