// Original file: proto/rebound/v1/dispatcher.proto

import type { Long } from '@grpc/proto-loader';

export interface TaskManagerInfo {
  'task_manager_id'?: (string);
  'address'?: (string);
  'slots_total'?: (number);
  'slots_free'?: (number);
  'last_heartbeat_ms'?: (number | string | Long);
}

export interface TaskManagerInfo__Output {
  'task_manager_id': (string);
  'address': (string);
  'slots_total': (number);
  'slots_free': (number);
  'last_heartbeat_ms': (number);
}
