import type { JobStatus__Output, JobSummary__Output, RecoveryReport__Output, TaskCounts__Output, VertexStatus__Output } from '@rebound/core';
import { camelize, type Camelized, formatBytes, formatDurationMs, formatTimestamp, renderTable } from './format.js';

const ZERO_COUNTS: TaskCounts__Output = { created: 0, scheduled: 0, deploying: 0, running: 0, finished: 0, failed: 0, canceled: 0 };

export function taskCounts(v: Pick<VertexStatus__Output, 'tasks'>): TaskCounts__Output {
  return v.tasks ?? ZERO_COUNTS;
}

/** Tasks of a vertex: its parallelism once decided, else the tasks known so far (0 = not decided). */
export function vertexTotal(v: Pick<VertexStatus__Output, 'parallelism' | 'tasks'>): number {
  if (v.parallelism > 0) return v.parallelism;
  const c = taskCounts(v);
  return c.created + c.scheduled + c.deploying + c.running + c.finished + c.failed + c.canceled;
}

/** `rebound status --json`: the JobStatus message with camelCase keys; `tasks` always present. */
export type JobStatusJson = Camelized<Omit<JobStatus__Output, 'vertices'>> & {
  vertices: (Camelized<Omit<VertexStatus__Output, 'tasks'>> & { tasks: Camelized<TaskCounts__Output> })[];
};

/** The `--json` form of a JobStatus: the proto message with camelCase keys. */
export function jobStatusToJson(status: JobStatus__Output): JobStatusJson {
  // Key order as in the proto (the decoded message lists repeated fields first).
  const ordered: JobStatus__Output = {
    job_id: status.job_id,
    name: status.name,
    state: status.state,
    vertices: status.vertices.map((v) => ({
      id: v.id,
      name: v.name,
      parallelism: v.parallelism,
      state: v.state,
      tasks: taskCounts(v),
      parallelism_decided_adaptively: v.parallelism_decided_adaptively,
      bytes_consumed: v.bytes_consumed,
      bytes_produced: v.bytes_produced,
      records_in: v.records_in,
      records_out: v.records_out,
      max_parallelism: v.max_parallelism,
    })),
    submitted_at_ms: status.submitted_at_ms,
    finished_at_ms: status.finished_at_ms,
    failure: status.failure,
    restarts: status.restarts,
    leader_epoch: status.leader_epoch,
    recoveries: status.recoveries,
    notes: status.notes,
  };
  return camelize(ordered) as JobStatusJson;
}

export function jobSummariesToJson(jobs: readonly JobSummary__Output[]): Record<string, unknown> {
  return camelize({ jobs }) as Record<string, unknown>;
}

function recoveryLines(r: RecoveryReport__Output, index: number): string[] {
  const gap = r.old_leader_last_heard_ms > 0 && r.elected_at_ms > 0 ? formatDurationMs(r.elected_at_ms - r.old_leader_last_heard_ms) : '-';
  const took = r.started_at_ms > 0 && r.finished_at_ms >= r.started_at_ms ? formatDurationMs(r.finished_at_ms - r.started_at_ms) : '-';
  const head = `  #${index + 1} epoch ${r.epoch}${r.reason ? ` (${r.reason})` : ''}${r.restarted_from_scratch ? ': RESTARTED FROM SCRATCH' : ''}`;
  return [
    head,
    `     detect+elect ${gap}, replay ${formatDurationMs(r.replay_ms)} (${r.events_replayed} events), reconnect wait ${formatDurationMs(r.reconnect_wait_ms)}, total ${took}`,
    `     tasks reused ${r.executions_recovered}, rerun ${r.executions_reset}; partitions reused ${r.partitions_reused} (${formatBytes(r.partition_bytes_reused)}), released ${r.partitions_released} (${formatBytes(r.partition_bytes_released)}), missing ${r.partitions_missing}; torn tail discarded ${formatBytes(r.torn_tail_bytes_discarded)}`,
  ];
}

/** The human form of `rebound status`. */
export function renderJobStatus(status: JobStatus__Output): string[] {
  const lines = [
    `Job ${status.name || '(unnamed)'} ${status.job_id}`,
    `  state      ${status.state}${status.leader_epoch ? ` (leader epoch ${status.leader_epoch})` : ''}`,
    `  submitted  ${formatTimestamp(status.submitted_at_ms)}`,
  ];
  if (status.finished_at_ms > 0) {
    lines.push(`  finished   ${formatTimestamp(status.finished_at_ms)} (took ${formatDurationMs(status.finished_at_ms - status.submitted_at_ms)})`);
  }
  if (status.restarts > 0) lines.push(`  restarts   ${status.restarts}`);
  if (status.failure) lines.push(`  failure    ${status.failure.split('\n')[0]}`);
  lines.push('');
  const rows = status.vertices.map((v) => {
    const total = vertexTotal(v);
    return [
      v.name || v.id,
      v.parallelism > 0 ? `${v.parallelism}${v.parallelism_decided_adaptively ? ' (adaptive)' : ''}` : '-',
      v.state,
      `${taskCounts(v).finished}/${total > 0 ? total : '?'}`,
      formatBytes(v.bytes_consumed),
    ];
  });
  lines.push(...renderTable(['VERTEX', 'PARALLELISM', 'STATE', 'TASKS', 'BYTES CONSUMED'], rows).map((l) => `  ${l}`));
  if (status.recoveries.length > 0) {
    lines.push('', 'Recoveries after JobMaster failover:');
    status.recoveries.forEach((r, i) => lines.push(...recoveryLines(r, i)));
  }
  if (status.notes.length > 0) {
    lines.push('', 'Notes:', ...status.notes.map((n) => `  - ${n}`));
  }
  return lines;
}

/** The human form of `rebound list`. */
export function renderJobList(jobs: readonly JobSummary__Output[]): string[] {
  if (jobs.length === 0) return ['no jobs'];
  const rows = [...jobs]
    .sort((a, b) => a.submitted_at_ms - b.submitted_at_ms)
    .map((j) => [
      j.job_id,
      j.name,
      j.state,
      `${j.tasks_finished}/${j.tasks_total}`,
      formatTimestamp(j.submitted_at_ms),
      j.finished_at_ms > 0 ? formatDurationMs(j.finished_at_ms - j.submitted_at_ms) : '-',
    ]);
  const damaged = jobs.filter((j) => j.error).map((j) => `${j.job_id}: ${j.error}`);
  return [...renderTable(['JOB ID', 'NAME', 'STATE', 'TASKS', 'SUBMITTED', 'DURATION'], rows), ...damaged];
}
