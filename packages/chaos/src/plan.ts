import { drawFault, drawFaultKinds, environmentOf, type PlanOptions } from './fault-draw.js';
import type { FaultPlan, HaBackend } from './faults.js';
import { DRAWN_JOB_NAMES, drawJobParams, jobShape, type JobName, type JobParams } from './jobs.js';
import { Prng } from './prng.js';

/** Everything a run will do, drawn from its seed before anything starts. */
export interface RunPlan {
  readonly seed: number;
  readonly job: JobParams;
  readonly faults: readonly FaultPlan[];
  /** execution.batch.job-recovery.snapshot.min-pause of the run: 0 ms or the default 3 min. */
  readonly snapshotMinPause: string;
  /** The run's HA backend: on etcd it starts a 3-member etcd cluster of its own. */
  readonly ha: HaBackend;
  /** Whether the run puts its daemons in cgroups it can cut off the network (partition.ts). */
  readonly partitions: boolean;
  /**
   * execution.batch.job-recovery.keep-running-tasks of the run, set explicitly whatever the
   * default: on, a leader kill or pause must not redeploy a task that was running on a live
   * TaskManager (task-log.ts, accountRunningTasks).
   */
  readonly keepRunningTasks: boolean;
  /** Shuffle workers of the run: 0 is TaskManager shuffle, more is `shuffle.type: remote`. */
  readonly shuffleWorkers: number;
  /** shuffle.remote.replicas of a remote-shuffle run (1 when it has one worker). */
  readonly shuffleReplicas: number;
}

export interface RunPlanOptions extends PlanOptions {
  readonly job?: JobName;
  /**
   * Multiplies the job's per-record delays. Fault triggers count finished tasks, and on a fast,
   * quiet machine the gaps between the source subtasks' finishes (staggered by DelayedSource) can
   * be shorter than a trigger's delay, so a trigger near the end can miss the job; a slower job
   * widens the gaps and gives the same faults room to land.
   */
  readonly slowdown?: number;
  /** Overrides the run's drawn keep-running-tasks choice. */
  readonly keepRunningTasks?: boolean;
  /** Overrides the drawn shuffle.remote.replicas (1 or 2, at most shuffleWorkers). */
  readonly shuffleReplicas?: number;
}

/** The job with its per-record delays multiplied by `factor` (same input, same output). */
export function slowedDown(job: JobParams, factor: number): JobParams {
  if (factor === 1) return job;
  switch (job.job) {
    case 'wordcount':
    case 'unique-ids':
      return { ...job, lineDelayMs: job.lineDelayMs * factor };
    case 'aggregation':
    case 'join':
      return { ...job, batchDelayMs: job.batchDelayMs * factor };
  }
}

/** The plan of the run with `seed`: the same seed and options always give the same plan. */
export function planRun(seed: number, opts: RunPlanOptions = {}): RunPlan {
  const prng = new Prng(seed);
  // Always drawn, so that --job does not shift the draws after it.
  const drawnJob = prng.pick(DRAWN_JOB_NAMES);
  const job = slowedDown(drawJobParams(prng, opts.job ?? drawnJob), opts.slowdown ?? 1);
  const shape = jobShape(job);
  const kinds = drawFaultKinds(prng, opts);
  const faults = kinds.map((k, i) => drawFault(prng, k, shape, i === 0, opts));
  const snapshotMinPause = prng.chance(0.5) ? '0 ms' : '3 min';
  // Drawn last and always, so the draws before it are those of older seeds' plans.
  const drawnKeepRunning = prng.chance(0.5);
  const drawnReplicas = prng.chance(0.5) ? 2 : 1;
  const env = environmentOf(opts);
  return {
    seed,
    job,
    faults,
    snapshotMinPause,
    ha: env.ha,
    partitions: env.partitions,
    keepRunningTasks: opts.keepRunningTasks ?? drawnKeepRunning,
    shuffleWorkers: env.shuffleWorkers,
    shuffleReplicas: env.shuffleWorkers === 0 ? 0 : Math.min(env.shuffleWorkers, opts.shuffleReplicas ?? drawnReplicas),
  };
}
