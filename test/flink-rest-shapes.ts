/**
 * Field names of Flink's documented REST v1 responses (Flink's REST API reference, the
 * `JobDetails`, `JobDetailsInfo`, `JobDetailsVertexInfo`, `IOMetricsInfo`, `ClusterOverviewWithVersion`,
 * `TaskManagerInfo`, `JobExceptionsInfoWithHistory`/`RootExceptionInfo` schemas). Rebound's responses
 * must carry each of them; Rebound's own additions live under other names.
 */
export const FLINK_SHAPES = {
  clusterOverview: ['taskmanagers', 'slots-total', 'slots-available', 'jobs-running', 'jobs-finished', 'jobs-cancelled', 'jobs-failed', 'flink-version', 'flink-commit', 'taskmanagers-blocked', 'slots-free-and-blocked'],
  jobDetails: ['jid', 'name', 'state', 'start-time', 'end-time', 'duration', 'last-modification', 'tasks', 'pending-operators'],
  jobDetailsTasks: ['total', 'created', 'scheduled', 'deploying', 'running', 'finished', 'canceling', 'canceled', 'failed', 'reconciling', 'initializing'],
  jobDetailsInfo: ['jid', 'name', 'isStoppable', 'state', 'job-type', 'start-time', 'end-time', 'duration', 'maxParallelism', 'now', 'timestamps', 'vertices', 'status-counts', 'plan', 'pending-operators'],
  jobStatuses: ['INITIALIZING', 'CREATED', 'RUNNING', 'FAILING', 'FAILED', 'CANCELLING', 'CANCELED', 'FINISHED', 'RESTARTING', 'SUSPENDED', 'RECONCILING'],
  executionStates: ['CREATED', 'SCHEDULED', 'DEPLOYING', 'RUNNING', 'FINISHED', 'CANCELING', 'CANCELED', 'FAILED', 'RECONCILING', 'INITIALIZING'],
  jobDetailsVertexInfo: ['id', 'slotSharingGroupId', 'name', 'maxParallelism', 'parallelism', 'status', 'start-time', 'end-time', 'duration', 'tasks', 'metrics'],
  ioMetricsInfo: [
    'read-bytes', 'read-bytes-complete', 'write-bytes', 'write-bytes-complete', 'read-records', 'read-records-complete',
    'write-records', 'write-records-complete', 'accumulated-backpressured-time', 'accumulated-idle-time', 'accumulated-busy-time',
  ],
  planNode: ['id', 'parallelism', 'operator', 'operator_strategy', 'description', 'optimizer_properties'],
  planInput: ['num', 'id', 'ship_strategy', 'exchange'],
  taskManagerInfo: ['id', 'path', 'dataPort', 'jmxPort', 'timeSinceLastHeartbeat', 'slotsNumber', 'freeSlots', 'totalResource', 'freeResource', 'hardware', 'memoryConfiguration', 'blocked'],
  jobExceptions: ['exceptionHistory'],
  jobExceptionsLegacy: ['root-exception', 'timestamp', 'all-exceptions', 'truncated'],
  exceptionHistory: ['entries', 'truncated'],
  rootExceptionInfo: ['exceptionName', 'stacktrace', 'timestamp', 'taskName', 'endpoint', 'taskManagerId', 'failureLabels', 'concurrentExceptions'],
} as const;
