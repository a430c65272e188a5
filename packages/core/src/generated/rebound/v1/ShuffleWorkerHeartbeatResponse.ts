// Original file: proto/rebound/v1/shuffle.proto

import type { Long } from '@grpc/proto-loader';

export interface ShuffleWorkerHeartbeatResponse {
  'registered'?: (boolean);
  'epoch'?: (number | string | Long);
  'live_jobs'?: (string)[];
}

export interface ShuffleWorkerHeartbeatResponse__Output {
  'registered': (boolean);
  'epoch': (number);
  'live_jobs': (string)[];
}
