/**
 * What the TaskManagers' task events say about a leader kill: which subtasks had finished or were
 * running under the killed leader, which ran again under the new one, and the work lost.
 */
import { executionVertexKey } from '@rebound/core';
import type { KilledLeader, TaskEvent } from './cluster.js';

/** An event of the killed leader's time: before the kill, of its epoch or an earlier one. */
export function ofKilledLeader(e: TaskEvent, kill: KilledLeader): boolean {
  return e.time < kill.killedAtMs && (e.epoch ?? 0) <= kill.epoch;
}

/** An event of a leader elected after the kill. */
export function ofNewLeader(e: TaskEvent, kill: KilledLeader): boolean {
  return (e.epoch ?? 0) > kill.epoch;
}

export interface Reexecution {
  /** Subtasks with a task.finish before the kill (the old leader's epoch). */
  finishedBeforeKill: number;
  /** Subtasks deployed before the kill that had not finished by then (their work is lost). */
  runningAtKill: number;
  /** Finished before the kill and deployed again after it. */
  reexecuted: number;
  fraction: number;
  /** False with recovery off: there is no event log, so the fields below are empty. */
  eventLog: boolean;
  /** Of those, the ones whose ExecutionVertexFinished event was in the log when the leader died. */
  reexecutedDurable: string[];
  /** Re-executed whose event was not durable (finished within a flush interval of the kill, or the FINISHED report never arrived). */
  reexecutedNotDurable: string[];
  /** Finished events in the log at the kill (not reset afterwards). */
  durableFinishedAtKill: number;
  /** Finished on a TaskManager before the kill, but no durable event (≤ flush interval + report latency). */
  finishedNotDurableAtKill: number;
}

export function analyseReexecution(
  events: readonly TaskEvent[],
  kill: KilledLeader,
  durable: ReadonlyMap<string, number> | undefined,
): Reexecution {
  const finished = new Map<string, TaskEvent>();
  const deployedBefore = new Set<string>();
  const redeployed = new Set<string>();
  for (const e of events) {
    const key = executionVertexKey(e.vertexId, e.subtask);
    const before = ofKilledLeader(e, kill);
    if (e.event === 'task.finish' && before) finished.set(key, e);
    if (e.event === 'task.deploy' && before) deployedBefore.add(key);
    if (e.event === 'task.deploy' && ofNewLeader(e, kill)) redeployed.add(key);
  }
  const reexecuted = [...finished.keys()].filter((k) => redeployed.has(k));
  const isDurable = (k: string): boolean => durable !== undefined && durable.get(k) === finished.get(k)!.attempt;
  const base = {
    finishedBeforeKill: finished.size,
    runningAtKill: [...deployedBefore].filter((k) => !finished.has(k)).length,
    reexecuted: reexecuted.length,
    fraction: finished.size === 0 ? 0 : reexecuted.length / finished.size,
  };
  if (!durable)
    return {
      ...base,
      eventLog: false,
      reexecutedDurable: [],
      reexecutedNotDurable: [],
      durableFinishedAtKill: 0,
      finishedNotDurableAtKill: 0,
    };
  return {
    ...base,
    eventLog: true,
    reexecutedDurable: reexecuted.filter(isDurable),
    reexecutedNotDurable: reexecuted.filter((k) => !isDurable(k)),
    durableFinishedAtKill: durable.size,
    finishedNotDurableAtKill: [...finished.keys()].filter((k) => !isDurable(k)).length,
  };
}

/** Slot-ms of work thrown away by the failover, divided by the number of slots. */
export function lostWorkPerSlot(events: readonly TaskEvent[], kill: KilledLeader, slots: number): number {
  const deployed = new Map<string, number>();
  const finished = new Map<string, number>();
  const rerun = new Set<string>();
  for (const e of events) {
    const key = executionVertexKey(e.vertexId, e.subtask);
    if (ofNewLeader(e, kill)) {
      if (e.event === 'task.deploy') rerun.add(key);
      continue;
    }
    if (e.event === 'task.deploy') deployed.set(key, e.time);
    if (e.event === 'task.finish') finished.set(key, e.time);
  }
  let lost = 0;
  for (const [key, t] of deployed) {
    const f = finished.get(key);
    if (f === undefined || f >= kill.killedAtMs) lost += Math.max(0, kill.killedAtMs - t);
    else if (rerun.has(key)) lost += f - t;
  }
  return lost / slots;
}

export function redeployedAfter(events: readonly TaskEvent[], kill: KilledLeader) {
  const before = new Set<string>();
  const finishedBefore = new Set<string>();
  const after = new Set<string>();
  let deploymentsAfterKill = 0;
  for (const e of events) {
    const key = executionVertexKey(e.vertexId, e.subtask);
    const old = ofKilledLeader(e, kill);
    if (e.event === 'task.deploy' && old) before.add(key);
    if (e.event === 'task.finish' && old) finishedBefore.add(key);
    if (e.event === 'task.deploy' && ofNewLeader(e, kill)) {
      after.add(key);
      deploymentsAfterKill++;
    }
  }
  const redeployed = [...before].filter((k) => after.has(k)).sort();
  return {
    runningAtKill: [...before].filter((k) => !finishedBefore.has(k)).length,
    redeployed,
    finishedRedeployed: redeployed.filter((k) => finishedBefore.has(k)),
    deploymentsAfterKill,
  };
}

/** The TaskManager on which the most subtasks finished before now (ties: the lowest id). */
export function busiestTaskManager(events: readonly TaskEvent[]): { id: string; finishedOnIt: number } | undefined {
  const perTm = new Map<string, number>();
  for (const e of events)
    if (e.event === 'task.finish') perTm.set(e.taskManagerId, (perTm.get(e.taskManagerId) ?? 0) + 1);
  const [best] = [...perTm].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return best ? { id: best[0], finishedOnIt: best[1] } : undefined;
}
