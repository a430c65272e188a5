// Original file: proto/rebound/v1/taskexecutor.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { ExecutionState as _rebound_v1_ExecutionState, ExecutionState__Output as _rebound_v1_ExecutionState__Output } from '../../rebound/v1/ExecutionState.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from '../../rebound/v1/IOMetrics.js';
import type { CoordinatorResponses as _rebound_v1_CoordinatorResponses, CoordinatorResponses__Output as _rebound_v1_CoordinatorResponses__Output } from '../../rebound/v1/CoordinatorResponses.js';
import type { Long } from '@grpc/proto-loader';

export interface HeldTask {
  'execution'?: (_rebound_v1_ExecutionAttemptId | null);
  'deploy_epoch'?: (number | string | Long);
  'state'?: (_rebound_v1_ExecutionState);
  'splits_json'?: (string)[];
  'io_metrics'?: (_rebound_v1_IOMetrics | null);
  'sink_temp_file'?: (string);
  'coordinator_responses'?: (_rebound_v1_CoordinatorResponses)[];
}

export interface HeldTask__Output {
  'execution': (_rebound_v1_ExecutionAttemptId__Output | null);
  'deploy_epoch': (number);
  'state': (_rebound_v1_ExecutionState__Output);
  'splits_json': (string)[];
  'io_metrics': (_rebound_v1_IOMetrics__Output | null);
  'sink_temp_file': (string);
  'coordinator_responses': (_rebound_v1_CoordinatorResponses__Output)[];
}
