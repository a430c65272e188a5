// Original file: proto/rebound/v1/taskexecutor.proto

import type { Long } from '@grpc/proto-loader';

export interface DisconnectJobRequest {
  'epoch'?: (number | string | Long);
  'job_id'?: (string);
  'release_partitions'?: (boolean);
  'session_id'?: (string);
}

export interface DisconnectJobRequest__Output {
  'epoch': (number);
  'job_id': (string);
  'release_partitions': (boolean);
  'session_id': (string);
}
