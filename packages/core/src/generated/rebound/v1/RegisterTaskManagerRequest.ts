// Original file: proto/rebound/v1/jobmaster.proto

import type { Long } from '@grpc/proto-loader';

export interface RegisterTaskManagerRequest {
  'task_manager_id'?: (string);
  'address'?: (string);
  'slots'?: (number);
  'epoch'?: (number | string | Long);
  'jobs_with_retained_partitions'?: (string)[];
  'session_id'?: (string);
}

export interface RegisterTaskManagerRequest__Output {
  'task_manager_id': (string);
  'address': (string);
  'slots': (number);
  'epoch': (number);
  'jobs_with_retained_partitions': (string)[];
  'session_id': (string);
}
