import type { JobEvent } from './job-event.js';

/**
 * Realistic job events for tests and the benchmark: what a JobMaster records for a job of
 * `vertices` job vertices of `parallelism` subtasks, each producing `subpartitions`
 * subpartitions (the consumers' max parallelism for adaptive consumers).
 */
export const SAMPLE_JOB_ID = '0123456789abcdef0123456789abcdef';

export function initializedEvent(vertex: number, parallelism: number, producerParallelism = 0): JobEvent {
  const inputs =
    vertex === 0
      ? []
      : [
          {
            producer_vertex_id: `vertex-${vertex - 1}`,
            subtask_ranges: Array.from({ length: parallelism }, (_, i) => ({
              start: Math.floor((i * producerParallelism) / parallelism),
              end: Math.floor(((i + 1) * producerParallelism) / parallelism) - 1,
            })),
          },
        ];
  return { type: 'ExecutionJobVertexInitialized', event: { vertex_id: `vertex-${vertex}`, parallelism, inputs } };
}

export function finishedEvent(
  vertex: number,
  subtask: number,
  options: {
    attempt?: number;
    subpartitions?: number;
    snapshot?: Uint8Array;
    shuffleSnapshot?: Uint8Array;
    finishedAtMs?: number;
  } = {},
): JobEvent {
  const subpartitions = options.subpartitions ?? 16;
  const attempt = options.attempt ?? 0;
  const subpartitionBytes = Array.from(
    { length: subpartitions },
    (_, i) => 40_000 + ((subtask * 7919 + i * 104_729) % 2_000_000),
  );
  const bytesOut = subpartitionBytes.reduce((a, b) => a + b, 0);
  return {
    type: 'ExecutionVertexFinished',
    event: {
      vertex_id: `vertex-${vertex}`,
      subtask,
      attempt,
      location: {
        task_manager_id: `tm-${(subtask % 4).toString(16).padStart(8, '0')}`,
        address: `127.0.0.1:${40_000 + (subtask % 4)}`,
      },
      io_metrics: {
        records_in: 10_000 + subtask,
        records_out: 9_000 + subtask,
        bytes_in: bytesOut + 1234,
        bytes_out: bytesOut,
        subpartition_bytes: subpartitionBytes,
      },
      partitions: [{ job_id: SAMPLE_JOB_ID, vertex_id: `vertex-${vertex}`, subtask, attempt }],
      coordinator_snapshots: options.snapshot ? [{ operator_id: `source-${vertex}`, state: options.snapshot }] : [],
      coordinator_increments: options.snapshot
        ? [{ operator_id: `source-${vertex}`, state: Buffer.from(`split-${subtask}`) }]
        : [],
      ...(options.shuffleSnapshot
        ? { shuffle_master_snapshot: options.shuffleSnapshot, has_shuffle_master_snapshot: true }
        : {}),
      finished_at_ms: options.finishedAtMs ?? 1_700_000_000_000 + subtask,
    },
  };
}

export function resetEvent(vertex: number, subtasks: number[]): JobEvent {
  return {
    type: 'ExecutionVertexReset',
    event: { vertices: subtasks.map((subtask) => ({ vertex_id: `vertex-${vertex}`, subtask })) },
  };
}

/**
 * `count` events in the order a JobMaster writes them: per vertex an initialized event, then
 * finished events of its subtasks, with an occasional reset and rerun; the last finished
 * event of a vertex carries coordinator and shuffle-master snapshots.
 */
export function sampleJobEvents(count: number, parallelism = 64, subpartitions = 16): JobEvent[] {
  const events: JobEvent[] = [];
  let vertex = 0;
  while (events.length < count) {
    events.push(initializedEvent(vertex, parallelism, parallelism));
    for (let s = 0; s < parallelism && events.length < count; s++) {
      const last = s === parallelism - 1;
      if (s % 50 === 49 && events.length + 2 < count) {
        events.push(finishedEvent(vertex, s, { subpartitions }));
        events.push(resetEvent(vertex, [s]));
        events.push(finishedEvent(vertex, s, { attempt: 1, subpartitions }));
        continue;
      }
      events.push(
        finishedEvent(vertex, s, {
          subpartitions,
          ...(last ? { snapshot: Buffer.alloc(256, vertex), shuffleSnapshot: Buffer.alloc(64, 7) } : {}),
        }),
      );
    }
    vertex++;
  }
  return events.slice(0, count);
}
