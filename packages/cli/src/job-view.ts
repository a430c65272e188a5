import type { JobStatus__Output, JobSummary__Output, TaskCounts__Output, VertexStatus__Output } from '@rebound/core';
import { camelize, type Camelized, formatBytes, formatDurationMs, formatTimestamp, renderTable } from './format.js';
import { formatAgo, groupSubtasks, recoverySentence, type RerunSubtask } from './recovery-text.js';

const ZERO_COUNTS: TaskCounts__Output = {
  created: 0,
  scheduled: 0,
  deploying: 0,
  running: 0,
  finished: 0,
  failed: 0,
  canceled: 0,
};

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
    job_recovery_disabled: status.job_recovery_disabled,
    shuffle_type: status.shuffle_type,
  };
  return camelize(ordered) as JobStatusJson;
}

export function jobSummariesToJson(jobs: readonly JobSummary__Output[]): Record<string, unknown> {
  // `error` only where a job is DAMAGED: every other summary keeps its shape.
  return camelize({ jobs: jobs.map(({ error, ...rest }) => (error ? { ...rest, error } : rest)) }) as Record<
    string,
    unknown
  >;
}

export interface JobStatusRenderOptions {
  /** Relative times ("2.2 s ago") are against this clock. */
  readonly nowMs: number;
  /** Subtasks that ran again, by the epoch of the leader that reran them (local clusters: from the TaskManager logs). */
  readonly reruns?: ReadonlyMap<number, readonly RerunSubtask[]>;
}

function when(ms: number, nowMs: number): string {
  return `${formatAgo(ms, nowMs)} (${formatTimestamp(ms)})`;
}

/** The human form of `rebound status`: relative times, one sentence per failover, raw fields only in --json. */
export function renderJobStatus(status: JobStatus__Output, opts: JobStatusRenderOptions): string[] {
  const lines = [
    `Job ${status.name || '(unnamed)'} ${status.job_id}`,
    `  state      ${status.state}${status.leader_epoch ? ` under leader epoch ${status.leader_epoch}` : ''}`,
    `  submitted  ${status.submitted_at_ms > 0 ? when(status.submitted_at_ms, opts.nowMs) : '-'}`,
  ];
  if (status.finished_at_ms > 0) {
    const took =
      status.submitted_at_ms > 0 ? `, took ${formatDurationMs(status.finished_at_ms - status.submitted_at_ms)}` : '';
    lines.push(`  ended      ${when(status.finished_at_ms, opts.nowMs)}${took}`);
  }
  // What a JobMaster failover would cost this job: all of it.
  if (status.job_recovery_disabled) lines.push(`  recovery   off: ${status.job_recovery_disabled}`);
  if (status.restarts > 0) lines.push(`  restarts   ${status.restarts} (task failures)`);
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
    const n = status.recoveries.length;
    lines.push('', `Survived ${n} JobMaster failover${n === 1 ? '' : 's'}:`);
    status.recoveries.forEach((r, i) => {
      lines.push(`  ${recoverySentence(r, i, opts.nowMs)}`);
      const again = opts.reruns?.get(r.epoch) ?? [];
      if (opts.reruns) lines.push(`    ran again: ${again.length > 0 ? groupSubtasks(again) : 'nothing'}`);
    });
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
