// Original file: proto/rebound/v1/shuffle.proto

import type { Long } from '@grpc/proto-loader';

export interface RegisterShuffleWorkerResponse {
  'epoch'?: (number | string | Long);
  'jobmaster_id'?: (string);
  'heartbeat_interval_ms'?: (number | string | Long);
  'heartbeat_timeout_ms'?: (number | string | Long);
}

export interface RegisterShuffleWorkerResponse__Output {
  'epoch': (number);
  'jobmaster_id': (string);
  'heartbeat_interval_ms': (number);
  'heartbeat_timeout_ms': (number);
}
