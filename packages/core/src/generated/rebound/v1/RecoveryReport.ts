// Original file: proto/rebound/v1/dispatcher.proto

import type { Long } from '@grpc/proto-loader';

export interface RecoveryReport {
  'old_leader_last_heard_ms'?: (number | string | Long);
  'elected_at_ms'?: (number | string | Long);
  'replay_ms'?: (number | string | Long);
  'reconnect_wait_ms'?: (number | string | Long);
  'executions_recovered'?: (number);
  'executions_reset'?: (number);
  'partitions_reused'?: (number);
  'partition_bytes_reused'?: (number | string | Long);
  'partitions_released'?: (number);
  'partition_bytes_released'?: (number | string | Long);
  'partitions_missing'?: (number);
  'torn_tail_bytes_discarded'?: (number | string | Long);
  'restarted_from_scratch'?: (boolean);
  'reason'?: (string);
  'epoch'?: (number | string | Long);
  'events_replayed'?: (number);
  'started_at_ms'?: (number | string | Long);
  'finished_at_ms'?: (number | string | Long);
  'running_tasks_adopted'?: (number);
  'finished_tasks_reported'?: (number);
  'reconnect_wait_ended'?: (string);
  'partitions_reused_on_shuffle_workers'?: (number);
}

export interface RecoveryReport__Output {
  'old_leader_last_heard_ms': (number);
  'elected_at_ms': (number);
  'replay_ms': (number);
  'reconnect_wait_ms': (number);
  'executions_recovered': (number);
  'executions_reset': (number);
  'partitions_reused': (number);
  'partition_bytes_reused': (number);
  'partitions_released': (number);
  'partition_bytes_released': (number);
  'partitions_missing': (number);
  'torn_tail_bytes_discarded': (number);
  'restarted_from_scratch': (boolean);
  'reason': (string);
  'epoch': (number);
  'events_replayed': (number);
  'started_at_ms': (number);
  'finished_at_ms': (number);
  'running_tasks_adopted': (number);
  'finished_tasks_reported': (number);
  'reconnect_wait_ended': (string);
  'partitions_reused_on_shuffle_workers': (number);
}
