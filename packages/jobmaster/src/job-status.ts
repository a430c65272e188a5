import type { JobStatus, VertexStatus } from '@rebound/core';
import type { ExecutionJobVertex } from './execution-graph.js';
import type { JobStatusSource } from './job-status-source.js';

/** The JobStatus message `rebound status` and the Dispatcher show. */
export function buildJobStatus(job: JobStatusSource): JobStatus {
  return {
    job_id: job.jobId,
    name: job.name,
    state: job.state === 'FAILING' ? 'RUNNING' : job.state,
    vertices: job.graph.vertices.map((ejv) => vertexStatus(job, ejv)),
    submitted_at_ms: job.submittedAtMs,
    finished_at_ms: job.finishedAtMs,
    failure: job.failure,
    restarts: job.restarts,
    leader_epoch: job.leaderEpoch,
    recoveries: job.recoveries,
    notes: job.notes,
    job_recovery_disabled: job.jobRecoveryDisabled,
    shuffle_type: job.shuffleType,
  };
}

function vertexStatus(job: JobStatusSource, ejv: ExecutionJobVertex): VertexStatus {
  const c = ejv.countByState();
  let state: string;
  if (!ejv.isInitialized) state = 'CREATED';
  else if (ejv.isFinished()) state = 'FINISHED';
  // A failed or canceled job runs nothing any more, whatever its finished subtasks say.
  else if (job.state === 'FAILED' || job.state === 'CANCELED') state = c.FAILED > 0 ? 'FAILED' : 'CANCELED';
  else if (c.RUNNING + c.DEPLOYING > 0 || c.FINISHED > 0) state = 'RUNNING';
  else state = 'SCHEDULED';
  let bytesIn = 0;
  let bytesOut = 0;
  let recordsIn = 0;
  let recordsOut = 0;
  // What a consumer reads is what its producers wrote into its subpartition ranges.
  ejv.jobVertex.inputs.forEach((edge, i) => {
    const ranges = ejv.inputRanges[i] ?? [];
    for (const pv of job.graph.vertex(edge.source_vertex_id).vertices) {
      const sp = pv.ioMetrics?.subpartition_bytes ?? [];
      ejv.vertices.forEach((ev) => {
        if (ev.state !== 'FINISHED') return;
        const r = ranges[ev.subtask];
        if (r) for (let k = r.start; k <= r.end; k++) bytesIn += sp[k] ?? 0;
      });
    }
  });
  for (const ev of ejv.vertices) {
    bytesIn += ev.ioMetrics?.bytes_in ?? 0;
    bytesOut += ev.ioMetrics?.bytes_out ?? 0;
    recordsIn += ev.ioMetrics?.records_in ?? 0;
    recordsOut += ev.ioMetrics?.records_out ?? 0;
  }
  return {
    id: ejv.id,
    name: ejv.name,
    parallelism: ejv.parallelism,
    max_parallelism: ejv.jobVertex.max_parallelism || job.maxParallelism,
    state,
    tasks: {
      created: c.CREATED,
      scheduled: c.SCHEDULED,
      deploying: c.DEPLOYING,
      running: c.RUNNING,
      finished: c.FINISHED,
      failed: c.FAILED,
      canceled: c.CANCELED,
    },
    parallelism_decided_adaptively: ejv.decidedAdaptively,
    bytes_consumed: bytesIn,
    bytes_produced: bytesOut,
    records_in: recordsIn,
    records_out: recordsOut,
  };
}
