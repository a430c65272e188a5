import type { JobStatus__Output, RecoveryReport__Output, VertexStatus__Output } from '@rebound/core';

/** Decoded-proto fixtures for the CLI's rendering tests (all fields present, as grpc decodes them). */

export const JOB_ID = '0123456789abcdef0123456789abcdef';

export function vertex(
  name: string,
  parallelism: number,
  state: string,
  finished: number,
  running = 0,
  extra: Partial<VertexStatus__Output> = {},
): VertexStatus__Output {
  return {
    id: `v-${name.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`,
    name,
    parallelism,
    state,
    tasks: { created: 0, scheduled: 0, deploying: 0, running, finished, failed: 0, canceled: 0 },
    parallelism_decided_adaptively: false,
    bytes_consumed: 0,
    bytes_produced: 0,
    records_in: 0,
    records_out: 0,
    max_parallelism: 128,
    ...extra,
  };
}

export function status(
  state: string,
  vertices: VertexStatus__Output[],
  extra: Partial<JobStatus__Output> = {},
): JobStatus__Output {
  return {
    job_id: JOB_ID,
    name: 'wordcount',
    state,
    vertices,
    submitted_at_ms: 1_000,
    finished_at_ms: 0,
    failure: '',
    restarts: 0,
    leader_epoch: 2,
    recoveries: [],
    notes: [],
    job_recovery_disabled: '',
    shuffle_type: 'taskmanager',
    ...extra,
  };
}

export function recovery(extra: Partial<RecoveryReport__Output> = {}): RecoveryReport__Output {
  return {
    old_leader_last_heard_ms: 0,
    elected_at_ms: 0,
    replay_ms: 0,
    reconnect_wait_ms: 0,
    executions_recovered: 0,
    executions_reset: 0,
    partitions_reused: 0,
    partition_bytes_reused: 0,
    partitions_released: 0,
    partition_bytes_released: 0,
    partitions_missing: 0,
    torn_tail_bytes_discarded: 0,
    restarted_from_scratch: false,
    reason: '',
    epoch: 0,
    events_replayed: 0,
    started_at_ms: 0,
    finished_at_ms: 0,
    running_tasks_adopted: 0,
    finished_tasks_reported: 0,
    reconnect_wait_ended: '',
    partitions_reused_on_shuffle_workers: 0,
    ...extra,
  };
}
