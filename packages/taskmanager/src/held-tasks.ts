import type { CoordinatorResponses, HeldTask, IOMetrics, TaskDeploymentDescriptor__Output } from '@rebound/core';
import { Configuration } from '@rebound/core';

/** Whether a job's tasks keep running through the loss of their leader (issue 21). */
export function keepsRunningTasks(jobConfig: Configuration): boolean {
  return (
    jobConfig.getBoolean('execution.batch.job-recovery.enabled') &&
    jobConfig.getBoolean('execution.batch.job-recovery.keep-running-tasks')
  );
}

/**
 * What an attempt of a keep-running job received from its leaders: the splits it read and what
 * each user coordinator answered it. An adopting leader's coordinators must know both, or they
 * would hand the same split or the same block of ids out again.
 */
export class AttemptReceipts {
  readonly splits: string[] = [];
  private readonly responses = new Map<string, { json: string[]; incomplete: boolean }>();

  /** `maxResponses`: execution.batch.job-recovery.max-held-coordinator-responses. */
  constructor(private readonly maxResponses: number) {}

  addSplit(json: string): void {
    this.splits.push(json);
  }

  addResponse(operatorId: string, json: string): void {
    let held = this.responses.get(operatorId);
    if (!held) this.responses.set(operatorId, (held = { json: [], incomplete: false }));
    if (held.json.length < this.maxResponses) held.json.push(json);
    else held.incomplete = true;
  }

  coordinatorResponses(): CoordinatorResponses[] {
    return [...this.responses].map(([operator_id, r]) => ({
      operator_id,
      response_json: [...r.json],
      incomplete: r.incomplete,
    }));
  }
}

/** The end of a task of a keep-running job, kept until a leader takes it or the job goes. */
export interface HeldOutcome {
  readonly tdd: TaskDeploymentDescriptor__Output;
  readonly state: 'FINISHED' | 'FAILED' | 'CANCELED';
  readonly received: AttemptReceipts;
  readonly metrics?: IOMetrics;
}

/**
 * What a TaskManager keeps of the tasks of keep-running jobs that ended: a next leader may not
 * have the finished event (the old one died before it was written), and learns it from here.
 * The partitions themselves stay in the PartitionStore; this is the attempt, its metrics and what
 * it received. Bounded by the job's tasks; dropped with the job (DisconnectJob, retention end).
 */
export class HeldOutcomes {
  private readonly byKey = new Map<string, HeldOutcome>();

  put(key: string, outcome: HeldOutcome): void {
    this.byKey.set(key, outcome);
  }

  forgetJob(jobId: string): void {
    for (const [key, o] of this.byKey) if (o.tdd.execution?.job_id === jobId) this.byKey.delete(key);
  }

  jobs(): string[] {
    return [...new Set([...this.byKey.values()].map((o) => o.tdd.execution!.job_id))];
  }

  reports(jobId: string): HeldTask[] {
    const out: HeldTask[] = [];
    for (const o of this.byKey.values()) {
      if (o.tdd.execution?.job_id !== jobId) continue;
      out.push(heldTaskOf(o.tdd, o.state, o.received, o.metrics));
    }
    return out;
  }
}

export function heldTaskOf(
  tdd: TaskDeploymentDescriptor__Output,
  state: HeldTask['state'],
  received: AttemptReceipts,
  metrics?: IOMetrics,
): HeldTask {
  return {
    execution: tdd.execution,
    deploy_epoch: tdd.epoch,
    state,
    splits_json: [...received.splits],
    coordinator_responses: received.coordinatorResponses(),
    io_metrics: metrics ?? null,
    sink_temp_file: tdd.sink_temp_file,
  };
}
