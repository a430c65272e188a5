import { Prng } from './prng.js';
import {
  EXCLUSIVE_FAULTS,
  JOB_FILE_DAMAGE,
  POISON_MODES,
  POISON_RUNTIME_MODES,
  faultKindsFor,
  type CrashEventType,
  type CrashPointSpec,
  type DamagedJobFile,
  type FaultEnvironment,
  type FaultKind,
  type FaultPlan,
  type HaBackend,
  type Trigger,
} from './faults.js';

// Drawing a run's faults from its seed: the same seed and options always give the same faults.

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
  /** Shuffle workers of the run (0, the default: TaskManager shuffle). */
  readonly shuffleWorkers?: number;
}

/** The environment the options describe (file HA, no partitions, TaskManager shuffle unless said otherwise). */
export function environmentOf(opts: PlanOptions): FaultEnvironment {
  return { ha: opts.ha ?? 'file', partitions: opts.partitions ?? false, shuffleWorkers: opts.shuffleWorkers ?? 0 };
}

function trigger(prng: Prng, maxTasks: number, maxDelayMs: number, minTasks = 0): Trigger {
  return {
    afterFinishedTasks: prng.int(Math.min(minTasks, maxTasks), Math.max(minTasks, maxTasks)),
    delayMs: prng.int(0, maxDelayMs),
  };
}

function drawCrashPoint(prng: Prng, shape: JobShape): CrashPointSpec {
  // One past the sources is a task downstream of them; a job of one vertex has none, and a crash
  // point at a deploy or finish its fault-free run never makes would never trigger.
  const maxTask = shape.sourceSubtasks + (shape.vertices > 1 ? 1 : 0);
  const r = prng.int(0, 4);
  if (r === 0) return { kind: 'after-deploy', n: prng.int(1, maxTask) };
  const eventType: CrashEventType = r <= 1 ? 'ExecutionJobVertexInitialized' : 'ExecutionVertexFinished';
  const n = eventType === 'ExecutionJobVertexInitialized' ? prng.int(1, shape.vertices) : prng.int(1, maxTask);
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
    case 'poison-runtime':
      return { kind, trigger: trigger(prng, maxTasks, 1000), mode: prng.pick(POISON_RUNTIME_MODES) };
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
    case 'leader-and-tm-kill':
    case 'malformed-credentials':
      return { kind, trigger: trigger(prng, maxTasks, 1000, 1), taskManager: prng.int(1, tms) };
    case 'shuffle-worker-kill':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 1000, 1),
        worker: prng.int(1, Math.max(1, opts.shuffleWorkers ?? 1)),
        duringFailover: prng.chance(0.3),
        // Around heartbeat.timeout (3 s): back before or after the leader takes it for lost.
        restartAfterMs: prng.int(500, 6_000),
      };
    case 'shuffle-worker-partition-damage':
      return {
        kind,
        trigger: trigger(prng, maxTasks, 800, 1),
        pickFraction: prng.next(),
        damage: prng.chance(0.5) ? 'delete' : 'flip',
        positionFraction: prng.next(),
        duringFailover: prng.chance(0.5),
      };
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
