// Original file: proto/rebound/v1/shuffle.proto

import type { Long } from '@grpc/proto-loader';

export interface ShuffleWorkerHeartbeatRequest {
  'worker_id'?: (string);
  'epoch'?: (number | string | Long);
  'session_id'?: (string);
  'partitions'?: (number | string | Long);
  'bytes'?: (number | string | Long);
}

export interface ShuffleWorkerHeartbeatRequest__Output {
  'worker_id': (string);
  'epoch': (number);
  'session_id': (string);
  'partitions': (number);
  'bytes': (number);
}
