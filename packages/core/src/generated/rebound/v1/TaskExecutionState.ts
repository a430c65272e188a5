// Original file: proto/rebound/v1/jobmaster.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { ExecutionState as _rebound_v1_ExecutionState, ExecutionState__Output as _rebound_v1_ExecutionState__Output } from '../../rebound/v1/ExecutionState.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from '../../rebound/v1/IOMetrics.js';
import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { Long } from '@grpc/proto-loader';

export interface TaskExecutionState {
  'execution'?: (_rebound_v1_ExecutionAttemptId | null);
  'state'?: (_rebound_v1_ExecutionState);
  'task_manager_id'?: (string);
  'epoch'?: (number | string | Long);
  'io_metrics'?: (_rebound_v1_IOMetrics | null);
  'error_code'?: (string);
  'error_message'?: (string);
  'missing_partition'?: (_rebound_v1_ResultPartitionId | null);
  'session_id'?: (string);
  'deploy_epoch'?: (number | string | Long);
  'unreachable_shuffle_workers'?: (string)[];
}

export interface TaskExecutionState__Output {
  'execution': (_rebound_v1_ExecutionAttemptId__Output | null);
  'state': (_rebound_v1_ExecutionState__Output);
  'task_manager_id': (string);
  'epoch': (number);
  'io_metrics': (_rebound_v1_IOMetrics__Output | null);
  'error_code': (string);
  'error_message': (string);
  'missing_partition': (_rebound_v1_ResultPartitionId__Output | null);
  'session_id': (string);
  'deploy_epoch': (number);
  'unreachable_shuffle_workers': (string)[];
}
