// Original file: proto/rebound/v1/jobmaster.proto

import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from '../../rebound/v1/ExecutionAttemptId.js';
import type { Long } from '@grpc/proto-loader';

export interface SplitRequest {
  'execution'?: (_rebound_v1_ExecutionAttemptId | null);
  'epoch'?: (number | string | Long);
  'operator_id'?: (string);
  'finished_split_ids'?: (string)[];
  'task_manager_id'?: (string);
  'session_id'?: (string);
  'deploy_epoch'?: (number | string | Long);
}

export interface SplitRequest__Output {
  'execution': (_rebound_v1_ExecutionAttemptId__Output | null);
  'epoch': (number);
  'operator_id': (string);
  'finished_split_ids': (string)[];
  'task_manager_id': (string);
  'session_id': (string);
  'deploy_epoch': (number);
}
