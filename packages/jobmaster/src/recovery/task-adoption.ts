import { executionVertexKey } from '@rebound/core';
import type { HeldTask__Output, IOMetrics__Output } from '@rebound/core';
import type { SourceSplit } from '@rebound/api';
import type { ExecutionGraph, ExecutionVertex } from '../execution-graph.js';
import type { OperatorCoordinators } from '../operator-coordinators.js';
import type { RegisteredTaskManager, TaskManagerRegistry } from '../task-manager-registry.js';

/** A task a TaskManager kept through the failover, as it reported it to this leader. */
export interface ReportedTask {
  readonly tm: RegisteredTaskManager;
  readonly task: HeldTask__Output;
}

/** What the adoption decided. */
export interface AdoptionOutcome {
  /** Attempts that keep running in place: same attempt, same slot, no redeploy. */
  readonly adopted: readonly ExecutionVertex[];
  /** Attempts that finished while there was no leader, now recorded as finished. */
  readonly finished: readonly ExecutionVertex[];
  /** Reported running attempts this leader does not keep: they must be canceled on their TaskManager. */
  readonly cancel: readonly ReportedTask[];
}

const EMPTY_METRICS: IOMetrics__Output = {
  records_in: 0,
  records_out: 0,
  bytes_in: 0,
  bytes_out: 0,
  subpartition_bytes: [],
};

/**
 * The TaskManagers' reports of tasks they kept running through a JobMaster failover
 * (execution.batch.job-recovery.keep-running-tasks), and the decision, once the reconnect
 * window closes, of which to adopt.
 *
 * An execution is adopted from a report only when the log does not have it finished, the
 * reported attempt is not older than the log allows (`ev.attempt` after the replay: a finished
 * event that was later reset or dropped makes its attempt unusable), and its coordinators can
 * keep a subtask through a restore (`canKeepSubtask`). Of several reports of one subtask the
 * newest attempt wins (attempt, then the deploying epoch); the others are canceled.
 */
export class TaskAdoption {
  private readonly reports: ReportedTask[] = [];
  private readonly reportedKeys = new Set<string>();

  add(tm: RegisteredTaskManager, tasks: readonly HeldTask__Output[]): void {
    for (const task of tasks) {
      if (!task.execution) continue;
      this.reports.push({ tm, task });
      if (task.state === 'RUNNING' || task.state === 'FINISHED')
        this.reportedKeys.add(executionVertexKey(task.execution.vertex_id, task.execution.subtask));
    }
  }

  /** Whether some TaskManager reported a running or finished attempt of execution vertex `key`. */
  hasReport(key: string): boolean {
    return this.reportedKeys.has(key);
  }

  decide(
    graph: ExecutionGraph,
    coordinators: OperatorCoordinators,
    registry: TaskManagerRegistry,
    nowMs: number,
  ): AdoptionOutcome {
    const best = new Map<string, ReportedTask>();
    const cancel: ReportedTask[] = [];
    const highestReported = new Map<string, { ev: ExecutionVertex; attempt: number }>();
    for (const r of this.reports) {
      const e = r.task.execution!;
      const ev = graph.executionVertex(e.vertex_id, e.subtask);
      if (!ev) {
        if (r.task.state === 'RUNNING') cancel.push(r);
        continue;
      }
      highestReported.set(ev.key, { ev, attempt: Math.max(highestReported.get(ev.key)?.attempt ?? -1, e.attempt) });
      const usable =
        (r.task.state === 'RUNNING' || r.task.state === 'FINISHED') &&
        ev.state !== 'FINISHED' &&
        e.attempt >= ev.attempt &&
        canKeepSubtask(coordinators, ev, r.task) &&
        registry.get(r.tm.id) === r.tm;
      const current = best.get(ev.key);
      if (usable && (!current || newer(r.task, current.task))) {
        if (current && current.task.state === 'RUNNING') cancel.push(current);
        best.set(ev.key, r);
      } else if (r.task.state === 'RUNNING') {
        cancel.push(r);
      }
    }
    const adopted: ExecutionVertex[] = [];
    const finished: ExecutionVertex[] = [];
    for (const [key, r] of best) {
      const e = r.task.execution!;
      const ev = graph.executionVertex(e.vertex_id, e.subtask)!;
      ev.attempt = e.attempt;
      ev.attemptEpoch = r.task.deploy_epoch;
      ev.sinkTempFile = r.task.sink_temp_file;
      ev.location = { task_manager_id: r.tm.id, address: r.tm.address };
      coordinators.source(ev.jobVertex.id)?.adoptReader(ev.subtask, ev.attempt, reportedSplits(r.task) ?? []);
      for (const h of coordinators.userOf(ev.jobVertex.id)) {
        const held = r.task.coordinator_responses.find((c) => c.operator_id === h.operatorId);
        h.subtaskAdopted(ev.subtask, ev.attempt, held?.response_json ?? []);
      }
      if (r.task.state === 'FINISHED') {
        coordinators.subtaskFinished(ev);
        graph.markFinished(ev, ev.location, r.task.io_metrics ?? EMPTY_METRICS, nowMs);
        finished.push(ev);
      } else {
        graph.transition(ev, 'RUNNING');
        registry.adoptSlot(r.tm.id);
        adopted.push(ev);
      }
      highestReported.delete(key);
    }
    // The executions nobody kept get attempts no reported one has, so no late report of theirs
    // can pass for the rerun.
    for (const { ev, attempt } of highestReported.values()) {
      if (ev.state !== 'FINISHED' && ev.attempt <= attempt) ev.attempt = attempt + 1;
    }
    return { adopted, finished, cancel };
  }
}

function newer(a: HeldTask__Output, b: HeldTask__Output): boolean {
  const x = a.execution!.attempt;
  const y = b.execution!.attempt;
  return x !== y ? x > y : a.deploy_epoch > b.deploy_epoch;
}

/** The splits a reported reader holds; undefined when its report does not parse (it is not adopted). */
function reportedSplits(task: HeldTask__Output): SourceSplit[] | undefined {
  try {
    const splits = task.splits_json.map((j) => JSON.parse(j) as SourceSplit);
    return splits.every((s) => typeof s?.id === 'string') ? splits : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A subtask can be kept through the failover only where its coordinators are restored to a state
 * it can go on with: a source whose enumerator has batch snapshots (the splits it holds are
 * known), and user coordinators with batch snapshots and `subtaskAdopted`, told every response
 * the attempt got (what it obtained after the newest snapshot, a block of ids, is not in the
 * restored state, which would hand it out again). A reader that holds a split already consumed
 * (a deposed leader handed it out again) is not kept either. Any other subtask is canceled and rerun, as
 * FLIP-383 does, and so is one whose TaskManager kept too many responses to report them all.
 */
function canKeepSubtask(coordinators: OperatorCoordinators, ev: ExecutionVertex, task: HeldTask__Output): boolean {
  const source = coordinators.source(ev.jobVertex.id);
  if (source && !source.supportsBatchSnapshot()) return false;
  if (source) {
    const splits = reportedSplits(task);
    if (!splits || !source.canAdoptReader(splits)) return false;
  }
  return coordinators
    .userOf(ev.jobVertex.id)
    .every(
      (h) =>
        h.supportsAdoption() && !task.coordinator_responses.some((c) => c.operator_id === h.operatorId && c.incomplete),
    );
}
