// Original file: proto/rebound/v1/jobmaster.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { Long } from '@grpc/proto-loader';

export interface TaskManagerHeartbeat {
  'task_manager_id'?: (string);
  'epoch'?: (number | string | Long);
  'running'?: (_rebound_v1_ExecutionAttemptId)[];
  'session_id'?: (string);
}

export interface TaskManagerHeartbeat__Output {
  'task_manager_id': (string);
  'epoch': (number);
  'running': (_rebound_v1_ExecutionAttemptId__Output)[];
  'session_id': (string);
}
