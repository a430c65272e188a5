// Original file: proto/rebound/v1/events.proto

import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from '../../rebound/v1/TaskManagerLocation.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from '../../rebound/v1/IOMetrics.js';
import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { OperatorCoordinatorSnapshot as _rebound_v1_OperatorCoordinatorSnapshot, OperatorCoordinatorSnapshot__Output as _rebound_v1_OperatorCoordinatorSnapshot__Output } from '../../rebound/v1/OperatorCoordinatorSnapshot.js';
import type { Long } from '@grpc/proto-loader';

export interface ExecutionVertexFinishedEvent {
  'vertex_id'?: (string);
  'subtask'?: (number);
  'attempt'?: (number);
  'location'?: (_rebound_v1_TaskManagerLocation | null);
  'io_metrics'?: (_rebound_v1_IOMetrics | null);
  'partitions'?: (_rebound_v1_ResultPartitionId)[];
  'coordinator_snapshots'?: (_rebound_v1_OperatorCoordinatorSnapshot)[];
  'coordinator_increments'?: (_rebound_v1_OperatorCoordinatorSnapshot)[];
  'shuffle_master_snapshot'?: (Buffer | Uint8Array | string);
  'has_shuffle_master_snapshot'?: (boolean);
  'finished_at_ms'?: (number | string | Long);
  'sink_temp_file'?: (string);
  'attempt_epoch'?: (number | string | Long);
  'shuffle_master_snapshot_incremental'?: (boolean);
}

export interface ExecutionVertexFinishedEvent__Output {
  'vertex_id': (string);
  'subtask': (number);
  'attempt': (number);
  'location': (_rebound_v1_TaskManagerLocation__Output | null);
  'io_metrics': (_rebound_v1_IOMetrics__Output | null);
  'partitions': (_rebound_v1_ResultPartitionId__Output)[];
  'coordinator_snapshots': (_rebound_v1_OperatorCoordinatorSnapshot__Output)[];
  'coordinator_increments': (_rebound_v1_OperatorCoordinatorSnapshot__Output)[];
  'shuffle_master_snapshot': (Buffer);
  'has_shuffle_master_snapshot': (boolean);
  'finished_at_ms': (number);
  'sink_temp_file': (string);
  'attempt_epoch': (number);
  'shuffle_master_snapshot_incremental': (boolean);
}
