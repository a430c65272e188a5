// Original file: proto/rebound/v1/dispatcher.proto

import type { TaskCounts as _rebound_v1_TaskCounts, TaskCounts__Output as _rebound_v1_TaskCounts__Output } from '../../rebound/v1/TaskCounts.js';
import type { Long } from '@grpc/proto-loader';

export interface VertexStatus {
  'id'?: (string);
  'name'?: (string);
  'parallelism'?: (number);
  'state'?: (string);
  'tasks'?: (_rebound_v1_TaskCounts | null);
  'parallelism_decided_adaptively'?: (boolean);
  'bytes_consumed'?: (number | string | Long);
  'bytes_produced'?: (number | string | Long);
  'records_in'?: (number | string | Long);
  'records_out'?: (number | string | Long);
  'max_parallelism'?: (number);
}

export interface VertexStatus__Output {
  'id': (string);
  'name': (string);
  'parallelism': (number);
  'state': (string);
  'tasks': (_rebound_v1_TaskCounts__Output | null);
  'parallelism_decided_adaptively': (boolean);
  'bytes_consumed': (number);
  'bytes_produced': (number);
  'records_in': (number);
  'records_out': (number);
  'max_parallelism': (number);
}
