// Original file: proto/rebound/v1/jobmaster.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { Long } from '@grpc/proto-loader';

export interface CoordinationRequest {
  'execution'?: (_rebound_v1_ExecutionAttemptId | null);
  'epoch'?: (number | string | Long);
  'operator_id'?: (string);
  'request_json'?: (string);
  'task_manager_id'?: (string);
  'session_id'?: (string);
  'deploy_epoch'?: (number | string | Long);
}

export interface CoordinationRequest__Output {
  'execution': (_rebound_v1_ExecutionAttemptId__Output | null);
  'epoch': (number);
  'operator_id': (string);
  'request_json': (string);
  'task_manager_id': (string);
  'session_id': (string);
  'deploy_epoch': (number);
}
