// Original file: proto/rebound/v1/shuffle.proto

import type { Long } from '@grpc/proto-loader';

export interface PartitionWriteAck {
  'worker_id'?: (string);
  'total_bytes'?: (number | string | Long);
}

export interface PartitionWriteAck__Output {
  'worker_id': (string);
  'total_bytes': (number);
}
