import type { FaultPlan } from './faults.js';
import type { RunPlan } from './plan.js';
import type { TaskAccounting } from './task-log.js';

export type Outcome = 'ok' | 'stuck' | 'lost' | 'wrong-output' | 'not-fenced' | 'rerun-durable' | 'harness-error';

export interface FaultRecord {
  readonly kind: FaultPlan['kind'];
  readonly plan: FaultPlan;
  readonly description: string;
  injected: boolean;
  /** ms after submission. */
  atMs?: number;
  notes: string[];
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
  /** What makes the run fail (empty when it passed). */
  readonly problems: string[];
  readonly warnings: string[];
  tasks?: Omit<TaskAccounting, 'reruns'> & { reruns: TaskAccounting['reruns'] };
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

