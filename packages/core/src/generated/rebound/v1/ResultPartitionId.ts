// Original file: proto/rebound/v1/common.proto

import type { Long } from '@grpc/proto-loader';

export interface ResultPartitionId {
  'job_id'?: (string);
  'vertex_id'?: (string);
  'subtask'?: (number);
  'attempt'?: (number);
  'epoch'?: (number | string | Long);
}

export interface ResultPartitionId__Output {
  'job_id': (string);
  'vertex_id': (string);
  'subtask': (number);
  'attempt': (number);
  'epoch': (number);
}
