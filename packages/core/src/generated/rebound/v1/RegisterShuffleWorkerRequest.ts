// Original file: proto/rebound/v1/shuffle.proto

import type { Long } from '@grpc/proto-loader';

export interface RegisterShuffleWorkerRequest {
  'worker_id'?: (string);
  'address'?: (string);
  'epoch'?: (number | string | Long);
  'session_id'?: (string);
  'jobs_with_partitions'?: (string)[];
}

export interface RegisterShuffleWorkerRequest__Output {
  'worker_id': (string);
  'address': (string);
  'epoch': (number);
  'session_id': (string);
  'jobs_with_partitions': (string)[];
}
