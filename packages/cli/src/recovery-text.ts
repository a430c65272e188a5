import type { RecoveryReport__Output } from '@rebound/core';
import { formatBytes, formatDurationMs } from './format.js';

/**
 * The recovery report of a JobMaster failover as a person reads it: relative times and durations,
 * one short sentence per failover. Raw fields stay in `--json`.
 */

/** "2.2 s ago", "3 min 4 s ago"; `-` when unknown. */
export function formatAgo(atMs: number, nowMs: number): string {
  if (!(atMs > 0)) return 'at an unknown time';
  return `${formatDurationMs(Math.max(0, nowMs - atMs))} ago`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** The timeline of one failover: "leader lost 2.2 s ago → elected after 2.2 s → replay 11 ms → reconnect 142 ms". */
export function recoveryTimeline(r: RecoveryReport__Output, nowMs: number): string {
  const parts: string[] = [];
  if (r.old_leader_last_heard_ms > 0) parts.push(`leader lost ${formatAgo(r.old_leader_last_heard_ms, nowMs)}`);
  else if (r.elected_at_ms > 0) parts.push(`new leader elected ${formatAgo(r.elected_at_ms, nowMs)}`);
  if (r.old_leader_last_heard_ms > 0 && r.elected_at_ms >= r.old_leader_last_heard_ms) {
    parts.push(`elected after ${formatDurationMs(r.elected_at_ms - r.old_leader_last_heard_ms)}`);
  }
  parts.push(`replay ${formatDurationMs(r.replay_ms)}`);
  if (!r.restarted_from_scratch)
    parts.push(`reconnect ${formatDurationMs(r.reconnect_wait_ms)}${reconnectWaitEnd(r.reconnect_wait_ended)}`);
  return parts.join(' → ');
}

/** Why the reconnect wait ended, when it did not end because everything came back. */
function reconnectWaitEnd(ended: string): string {
  if (ended === 'timeout') return ' (timed out: what did not come back runs again)';
  if (ended === 'holders-settled') return ' (every TaskManager answered or is gone)';
  return '';
}

/** Where reused partitions were found, when shuffle workers kept some of them. */
function whereFound(r: RecoveryReport__Output): string {
  const onWorkers = r.partitions_reused_on_shuffle_workers;
  if (!onWorkers) return '';
  const onTms = r.partitions_reused - onWorkers;
  return ` (${onWorkers} kept on shuffle workers${onTms > 0 ? `, ${onTms} on TaskManagers` : ''})`;
}

/** What the failover cost and saved, in one clause. */
export function recoveryOutcome(r: RecoveryReport__Output): string {
  if (r.restarted_from_scratch) {
    return `recovery failed${r.reason ? ` (${r.reason})` : ''}, so the job restarted from scratch`;
  }
  const reused = `${plural(r.executions_recovered, 'finished task')} kept`;
  const partitions =
    r.partitions_reused > 0
      ? ` with ${plural(r.partitions_reused, 'partition')} (${formatBytes(r.partition_bytes_reused)}) reused${whereFound(r)}`
      : '';
  const rerun =
    r.executions_reset > 0 ? `${plural(r.executions_reset, 'finished task')} lost and rerun` : 'no finished work lost';
  const missing = r.partitions_missing > 0 ? `, ${plural(r.partitions_missing, 'partition')} missing` : '';
  const torn =
    r.torn_tail_bytes_discarded > 0
      ? `, ${formatBytes(r.torn_tail_bytes_discarded)} of torn event-log tail discarded`
      : '';
  const adopted = r.running_tasks_adopted > 0 ? `; running tasks adopted: ${r.running_tasks_adopted}` : '';
  return `${reused}${partitions}; ${rerun}${missing}${torn}${adopted}`;
}

/** One sentence per failover: "Failover 1 (epoch 2): leader lost 2.2 s ago → … ; 12 finished tasks kept …". */
export function recoverySentence(r: RecoveryReport__Output, index: number, nowMs: number): string {
  return `Failover ${index + 1}${r.epoch ? ` (epoch ${r.epoch})` : ''}: ${recoveryTimeline(r, nowMs)}; ${recoveryOutcome(r)}.`;
}

/** A subtask that ran again, as found in the TaskManager logs. */
export interface RerunSubtask {
  readonly vertex: string;
  readonly subtask: number;
}

/** Runs of consecutive numbers: [12,13,14,17] → "#12–#14, #17". */
function ranges(nums: readonly number[]): string {
  const sorted = [...new Set(nums)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    out.push(j === i ? `#${sorted[i]}` : `#${sorted[i]}–#${sorted[j]}`);
    i = j + 1;
  }
  return out.join(', ');
}

/** Subtasks grouped by vertex: "Source: TextFiles #12–#17; Sum(1) #0". Vertex names keep their first operator only. */
export function groupSubtasks(subtasks: readonly RerunSubtask[]): string {
  const byVertex = new Map<string, number[]>();
  for (const s of subtasks) {
    const name = s.vertex.split(' -> ')[0]!;
    byVertex.set(name, [...(byVertex.get(name) ?? []), s.subtask]);
  }
  return [...byVertex].map(([v, subs]) => `${v} ${ranges(subs)}`).join('; ');
}
