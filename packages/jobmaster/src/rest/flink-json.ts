import type { ExceptionHistorySnapshot } from '../exception-history.js';
import type {
  JobGraph__Output,
  JobStatus,
  JobSummary,
  RecoveryReport,
  TaskCounts,
  TaskManagerInfo,
  VertexStatus,
} from '@rebound/core';

/**
 * Rebound's job and cluster state in the JSON shapes of Flink's REST API v1 (same paths, same
 * field names, same state names), so scripts and tools written against Flink work unchanged.
 * Values Rebound does not have are Flink's "unknown" values (-1, 0, empty) rather than missing
 * fields: clients index these objects field by field.
 */

/** Flink's ExecutionState names, in Flink's order. */
export const EXECUTION_STATES = [
  'CREATED',
  'SCHEDULED',
  'DEPLOYING',
  'RUNNING',
  'FINISHED',
  'CANCELING',
  'CANCELED',
  'FAILED',
  'RECONCILING',
  'INITIALIZING',
] as const;
/** Flink's JobStatus names. */
export const JOB_STATES = [
  'INITIALIZING',
  'CREATED',
  'RUNNING',
  'FAILING',
  'FAILED',
  'CANCELLING',
  'CANCELED',
  'FINISHED',
  'RESTARTING',
  'SUSPENDED',
  'RECONCILING',
] as const;
const TERMINAL = new Set(['FINISHED', 'FAILED', 'CANCELED']);

export const REBOUND_VERSION = '0.1.0';

export type ExecutionStateCounts = Record<(typeof EXECUTION_STATES)[number], number>;

function countsOf(t: TaskCounts | null | undefined): ExecutionStateCounts {
  return {
    CREATED: t?.created ?? 0,
    SCHEDULED: t?.scheduled ?? 0,
    DEPLOYING: t?.deploying ?? 0,
    RUNNING: t?.running ?? 0,
    FINISHED: t?.finished ?? 0,
    CANCELING: 0,
    CANCELED: t?.canceled ?? 0,
    FAILED: t?.failed ?? 0,
    RECONCILING: 0,
    INITIALIZING: 0,
  };
}

function addCounts(into: ExecutionStateCounts, c: ExecutionStateCounts): void {
  for (const k of EXECUTION_STATES) into[k] += c[k];
}

function zeroCounts(): ExecutionStateCounts {
  return countsOf(undefined);
}

const n = (v: number | string | { toString(): string } | null | undefined): number => Number(v ?? 0);

export function isTerminalState(state: string): boolean {
  return TERMINAL.has(state);
}

function times(
  status: Pick<JobStatus, 'state' | 'submitted_at_ms' | 'finished_at_ms'>,
  now: number,
): { start: number; end: number; duration: number } {
  const start = n(status.submitted_at_ms) || -1;
  const end = isTerminalState(status.state ?? '') && n(status.finished_at_ms) > 0 ? n(status.finished_at_ms) : -1;
  const duration = start < 0 ? -1 : (end > 0 ? end : now) - start;
  return { start, end, duration };
}

/** Flink's IOMetricsInfo of a vertex. */
export function ioMetricsOf(v: VertexStatus): Record<string, number | boolean> {
  const complete = v.state === 'FINISHED';
  return {
    'read-bytes': n(v.bytes_consumed),
    'read-bytes-complete': complete,
    'write-bytes': n(v.bytes_produced),
    'write-bytes-complete': complete,
    'read-records': n(v.records_in),
    'read-records-complete': complete,
    'write-records': n(v.records_out),
    'write-records-complete': complete,
    'accumulated-backpressured-time': 0,
    'accumulated-idle-time': 0,
    'accumulated-busy-time': 0,
  };
}

/** One entry of `GET /jobs/overview` (Flink's JobDetails). */
export function jobDetailsOverview(status: JobStatus, now: number): Record<string, unknown> {
  const t = times(status, now);
  const all = zeroCounts();
  for (const v of status.vertices ?? []) addCounts(all, countsOf(v.tasks));
  const total = EXECUTION_STATES.reduce((s, k) => s + all[k], 0);
  return {
    jid: status.job_id,
    name: status.name,
    state: status.state,
    'start-time': t.start,
    'end-time': t.end,
    duration: t.duration,
    'last-modification': t.end > 0 ? t.end : now,
    tasks: {
      total,
      created: all.CREATED,
      scheduled: all.SCHEDULED,
      deploying: all.DEPLOYING,
      running: all.RUNNING,
      finished: all.FINISHED,
      canceling: all.CANCELING,
      canceled: all.CANCELED,
      failed: all.FAILED,
      reconciling: all.RECONCILING,
      initializing: all.INITIALIZING,
    },
    'pending-operators': (status.vertices ?? []).filter((v) => !v.parallelism).length,
  };
}

/** A job that only the JobGraphStore knows (no status yet): an overview entry from its summary. */
export function jobSummaryOverview(s: JobSummary, now: number): Record<string, unknown> {
  return jobDetailsOverview(
    {
      job_id: s.job_id,
      name: s.name,
      state: s.state,
      submitted_at_ms: s.submitted_at_ms,
      finished_at_ms: s.finished_at_ms,
      vertices: [],
    },
    now,
  );
}

/** `plan` of `GET /jobs/:jobid` (Flink's JSON plan): one node per job vertex, inputs by producer. */
export function planOf(graph: JobGraph__Output | undefined, status: JobStatus): Record<string, unknown> {
  const parallelism = new Map((status.vertices ?? []).map((v) => [v.id, v.parallelism ?? 0]));
  return {
    jid: status.job_id,
    name: status.name,
    type: 'BATCH',
    nodes: (graph?.vertices ?? []).map((v) => ({
      id: v.id,
      parallelism: parallelism.get(v.id) ?? v.parallelism,
      operator: v.source_operator_id ? 'Source' : v.sink?.operator_id ? 'Sink' : 'Operator',
      operator_strategy: '',
      description: v.name,
      inputs: v.inputs.map((e, i) => ({
        num: i,
        id: e.source_vertex_id,
        ship_strategy: String(e.distribution).replace(/^DISTRIBUTION_/, ''),
        exchange: 'blocking',
      })),
      optimizer_properties: {},
    })),
  };
}

/** `GET /jobs/:jobid` (Flink's JobDetailsInfo) plus Rebound's own fields under `rebound`. */
export function jobDetailsInfo(
  status: JobStatus,
  graph: JobGraph__Output | undefined,
  now: number,
  defaultMaxParallelism: number,
): Record<string, unknown> {
  const t = times(status, now);
  const statusCounts = zeroCounts();
  const vertices = (status.vertices ?? []).map((v) => {
    const counts = countsOf(v.tasks);
    addCounts(statusCounts, counts);
    return {
      id: v.id,
      slotSharingGroupId: 'default',
      name: v.name,
      maxParallelism: n(v.max_parallelism) || defaultMaxParallelism,
      parallelism: n(v.parallelism),
      status: v.state,
      'start-time': -1,
      'end-time': -1,
      duration: -1,
      tasks: counts,
      metrics: ioMetricsOf(v),
    };
  });
  const timestamps: Record<string, number> = Object.fromEntries(JOB_STATES.map((s) => [s, 0]));
  if (t.start > 0) timestamps.CREATED = t.start;
  if (t.end > 0 && status.state) timestamps[status.state] = t.end;
  return {
    jid: status.job_id,
    name: status.name,
    isStoppable: false,
    state: status.state,
    'job-type': 'BATCH',
    'start-time': t.start,
    'end-time': t.end,
    duration: t.duration,
    maxParallelism: Math.max(0, ...vertices.map((v) => v.maxParallelism)),
    now,
    timestamps,
    vertices,
    'status-counts': statusCounts,
    plan: planOf(graph, status),
    'pending-operators': vertices.filter((v) => v.parallelism === 0).length,
    rebound: {
      leaderEpoch: n(status.leader_epoch),
      restarts: n(status.restarts),
      failure: status.failure ?? '',
      notes: status.notes ?? [],
      recoveries: (status.recoveries ?? []).length,
      vertices: (status.vertices ?? []).map((v) => ({
        id: v.id,
        parallelismDecidedAdaptively: Boolean(v.parallelism_decided_adaptively),
        bytesConsumed: n(v.bytes_consumed),
        bytesProduced: n(v.bytes_produced),
        inputs: graph?.vertices.find((g) => g.id === v.id)?.inputs.map((e) => e.source_vertex_id) ?? [],
      })),
    },
  };
}

/** `GET /jobs/:jobid/exceptions`: Flink 2's `exceptionHistory` plus the 1.x fields (FLIP-354 removed them in 2.0). */
export function jobExceptions(status: JobStatus, history: ExceptionHistorySnapshot): Record<string, unknown> {
  const failure = status.failure ?? '';
  const at = n(status.finished_at_ms);
  const jobFailure = failure
    ? [
        {
          exceptionName: 'JobFailure',
          stacktrace: failure,
          timestamp: at,
          taskName: null,
          endpoint: null,
          taskManagerId: null,
          failureLabels: {},
          concurrentExceptions: [],
        },
      ]
    : [];
  // Newest first, as Flink lists them: the job's own failure (its last event) before its tasks'.
  const entries = [...jobFailure, ...history.entries];
  const root = entries[0];
  return {
    'root-exception': root ? root.stacktrace : null,
    timestamp: root ? root.timestamp : null,
    'all-exceptions': history.entries.map((e) => ({
      exception: e.stacktrace,
      task: e.taskName,
      location: e.endpoint,
      timestamp: e.timestamp,
      taskManagerId: e.taskManagerId,
    })),
    truncated: history.truncated,
    exceptionHistory: { entries, truncated: history.truncated },
  };
}

/** `GET /overview` (Flink's ClusterOverviewWithVersion). */
export function clusterOverview(
  tms: readonly TaskManagerInfo[],
  jobStates: readonly string[],
): Record<string, unknown> {
  const count = (s: string): number => jobStates.filter((x) => x === s).length;
  return {
    taskmanagers: tms.length,
    'slots-total': tms.reduce((s, t) => s + n(t.slots_total), 0),
    'slots-available': tms.reduce((s, t) => s + n(t.slots_free), 0),
    'jobs-running': jobStates.filter((s) => !isTerminalState(s)).length,
    'jobs-finished': count('FINISHED'),
    'jobs-cancelled': count('CANCELED'),
    'jobs-failed': count('FAILED'),
    'flink-version': `rebound-${REBOUND_VERSION}`,
    'flink-commit': '',
    'taskmanagers-blocked': 0,
    'slots-free-and-blocked': 0,
  };
}

const ZERO_RESOURCE = {
  cpuCores: 0,
  taskHeapMemory: 0,
  taskOffHeapMemory: 0,
  managedMemory: 0,
  networkMemory: 0,
  extendedResources: {},
};

/** One entry of `GET /taskmanagers` (Flink's TaskManagerInfo). */
export function taskManagerInfo(tm: TaskManagerInfo): Record<string, unknown> {
  const port = Number(/:(\d+)$/.exec(tm.address ?? '')?.[1] ?? -1);
  return {
    id: tm.task_manager_id,
    path: tm.address,
    dataPort: port,
    jmxPort: -1,
    // Flink's field carries the time of the last heartbeat (epoch ms), despite its name.
    timeSinceLastHeartbeat: n(tm.last_heartbeat_ms),
    slotsNumber: n(tm.slots_total),
    freeSlots: n(tm.slots_free),
    totalResource: ZERO_RESOURCE,
    freeResource: ZERO_RESOURCE,
    hardware: { cpuCores: 0, physicalMemory: 0, freeMemory: 0, managedMemory: 0 },
    memoryConfiguration: {
      frameworkHeap: 0,
      taskHeap: 0,
      frameworkOffHeap: 0,
      taskOffHeap: 0,
      networkMemory: 0,
      managedMemory: 0,
      jvmMetaspace: 0,
      jvmOverhead: 0,
      totalFlinkMemory: 0,
      totalProcessMemory: 0,
    },
    blocked: false,
  };
}

/** A recovery report as a timeline: old leader last heard → elected → replay → reconcile → running. */
export function recoveryTimeline(r: RecoveryReport): Record<string, unknown> {
  const started = n(r.started_at_ms);
  const replayEnd = started + n(r.replay_ms);
  const finished = n(r.finished_at_ms);
  const reconcileStart = finished > 0 ? finished - n(r.reconnect_wait_ms) : 0;
  return {
    epoch: n(r.epoch),
    restartedFromScratch: Boolean(r.restarted_from_scratch),
    reason: r.reason ?? '',
    phases: {
      oldLeaderLastHeardMs: n(r.old_leader_last_heard_ms),
      electedAtMs: n(r.elected_at_ms),
      replayStartedAtMs: started,
      replayFinishedAtMs: replayEnd,
      reconcileStartedAtMs: reconcileStart,
      runningAtMs: finished,
    },
    durations: {
      detectionMs:
        n(r.old_leader_last_heard_ms) > 0 ? Math.max(0, n(r.elected_at_ms) - n(r.old_leader_last_heard_ms)) : 0,
      electedToReplayMs: Math.max(0, started - n(r.elected_at_ms)),
      replayMs: n(r.replay_ms),
      reconcileMs: n(r.reconnect_wait_ms),
      totalMs: finished > 0 && n(r.elected_at_ms) > 0 ? finished - n(r.elected_at_ms) : 0,
    },
    eventsReplayed: n(r.events_replayed),
    // adopted: running attempts that carried on through the failover (keep-running-tasks);
    // finishedWhileLeaderless: attempts that finished with no leader and were recorded from the reports.
    tasks: {
      reused: n(r.executions_recovered),
      rerun: n(r.executions_reset),
      adopted: n(r.running_tasks_adopted),
      finishedWhileLeaderless: n(r.finished_tasks_reported),
    },
    partitions: {
      reused: n(r.partitions_reused),
      reusedBytes: n(r.partition_bytes_reused),
      released: n(r.partitions_released),
      releasedBytes: n(r.partition_bytes_released),
      missing: n(r.partitions_missing),
    },
    tornTailBytesDiscarded: n(r.torn_tail_bytes_discarded),
  };
}
