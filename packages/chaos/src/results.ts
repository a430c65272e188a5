import { NO_FAILOVER_FAULTS, type FaultPlan } from './faults.js';
import type { RunPlan } from './plan.js';
import { finishedBefore, type RunningAccounting, type TaskAccounting, type TaskEvent } from './task-log.js';

/**
 * `not-contained`: a poison job or a damaged job directory reached beyond its own job (a JobMaster
 * died, the damaged job was run again or not listed as DAMAGED). `forgery-accepted`: a forged call
 * was answered, refused otherwise than it must be, or changed what the cluster did.
 * `rerun-running`: with keep-running-tasks on, a leader kill or pause redeployed a task that was
 * running on a live TaskManager the next leader could reach (it should have been adopted).
 */
export type Outcome =
  | 'ok'
  | 'stuck'
  | 'lost'
  | 'wrong-output'
  | 'not-fenced'
  | 'not-contained'
  | 'forgery-accepted'
  | 'rerun-durable'
  | 'rerun-running'
  | 'harness-error';

export interface FaultRecord {
  readonly kind: FaultPlan['kind'];
  readonly plan: FaultPlan;
  readonly description: string;
  /** True only once the fault's distinctive step happened (see inject.ts). */
  injected: boolean;
  /** ms after submission. */
  atMs?: number;
  /**
   * Subtasks finished when the fault was injected, from the TaskManagers' task logs
   * (finishedBefore), set once the run is over; absent when the logs could not be read.
   */
  finishedTasksAtFault?: number;
  notes: string[];
}

/**
 * What a run that passed actually tested. Only 'recovered' counts as a correct recovery: a fault
 * that hit a job with no finished task, or a job that had already ended, proves nothing about
 * keeping finished work. 'contained': only faults that take no leader down (NO_FAILOVER_FAULTS)
 * hit the running job; the run tested that they stayed contained, not a recovery.
 */
export type RecoveryClass = 'recovered' | 'no-finished-work' | 'contained' | 'after-job-end' | 'not-injected';

export const RECOVERY_CLASSES: readonly RecoveryClass[] = [
  'recovered',
  'no-finished-work',
  'contained',
  'after-job-end',
  'not-injected',
];

/**
 * A fault tests recovery when it was injected before the job ended (`jobEndedAt`, absolute ms;
 * undefined if it never ended) with at least one finished task, and took a leader down. A run is
 * 'recovered' if one of its faults does; otherwise it is classified by the most telling of the others.
 */
export function classifyRecovery(
  faults: readonly FaultRecord[],
  submittedAt: number,
  jobEndedAt: number | undefined,
): RecoveryClass {
  const injected = faults.filter((f) => f.injected);
  if (injected.length === 0) return 'not-injected';
  const beforeEnd = injected.filter((f) => jobEndedAt === undefined || submittedAt + (f.atMs ?? 0) < jobEndedAt);
  const failovers = beforeEnd.filter((f) => !NO_FAILOVER_FAULTS.has(f.kind));
  if (failovers.some((f) => (f.finishedTasksAtFault ?? 0) > 0)) return 'recovered';
  if (failovers.length > 0) return 'no-finished-work';
  return beforeEnd.length > 0 ? 'contained' : 'after-job-end';
}

/**
 * Sets each injected fault's `finishedTasksAtFault` from the TaskManagers' task logs of the job:
 * what classifyRecovery counts as finished work at the fault is what TaskManagers finished.
 */
export function countFinishedAtFaults(
  faults: readonly FaultRecord[],
  events: readonly TaskEvent[],
  jobId: string,
  submittedAt: number,
): void {
  for (const f of faults) {
    if (f.injected) f.finishedTasksAtFault = finishedBefore(events, jobId, submittedAt + (f.atMs ?? 0));
  }
}

export interface RecoveryRecord {
  readonly epoch: number;
  readonly restartedFromScratch: boolean;
  readonly reason: string;
  readonly eventsReplayed: number;
  readonly replayMs: number;
  readonly reconnectWaitMs: number;
  /** Replay + reconciliation, as the new leader measured it. */
  readonly recoveryMs: number;
  readonly executionsRecovered: number;
  readonly executionsReset: number;
  readonly partitionsReused: number;
  readonly partitionsMissing: number;
  readonly tornTailBytesDiscarded: number;
}

export interface RunResult {
  readonly run: number;
  readonly seed: number;
  readonly job: string;
  readonly jobDescription: string;
  jobId?: string;
  readonly faults: FaultRecord[];
  outcome: Outcome;
  /** What the run tested (see RecoveryClass); a correct recovery is outcome 'ok' and 'recovered'. */
  recovery?: RecoveryClass;
  /** What makes the run fail (empty when it passed). */
  readonly problems: string[];
  readonly warnings: string[];
  tasks?: Omit<TaskAccounting, 'reruns'> & { reruns: TaskAccounting['reruns'] };
  /** execution.batch.job-recovery.keep-running-tasks of the run (drawn from its seed). */
  keepRunningTasks?: boolean;
  /** The remote shuffle of the run, e.g. `remote 2w 1r` (workers, replicas); absent on TaskManager shuffle. */
  shuffle?: string;
  /** Running tasks at the leader kills and pauses, and which of them were redeployed. */
  runningTasks?: RunningAccounting;
  readonly recoveries: RecoveryRecord[];
  /** From each leader loss to the first status in which the job ran again under a newer leader. */
  readonly observedRecoveryMs: number[];
  spontaneousFailovers: number;
  finalState?: string;
  durationMs: number;
  replay: string;
  workdir?: string;
}

export interface RunOptions {
  readonly run: number;
  readonly plan: RunPlan;
  /** Directory under which the run's work directory is created. */
  readonly workRoot: string;
  /** The job must be FINISHED this long after submission. */
  readonly deadlineMs: number;
  /** Keep the work directory even when the run passed. */
  readonly keepWorkdir?: boolean;
  readonly replayCommand: string;
  readonly log?: (line: string) => void;
}
