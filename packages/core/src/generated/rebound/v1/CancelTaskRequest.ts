// Original file: proto/rebound/v1/taskexecutor.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { Long } from '@grpc/proto-loader';

export interface CancelTaskRequest {
  'epoch'?: (number | string | Long);
  'execution'?: (_rebound_v1_ExecutionAttemptId | null);
  'session_id'?: (string);
  'deploy_epoch'?: (number | string | Long);
}

export interface CancelTaskRequest__Output {
  'epoch': (number);
  'execution': (_rebound_v1_ExecutionAttemptId__Output | null);
  'session_id': (string);
  'deploy_epoch': (number);
}
