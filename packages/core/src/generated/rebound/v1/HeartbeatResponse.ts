// Original file: proto/rebound/v1/jobmaster.proto

import type { Long } from '@grpc/proto-loader';

export interface HeartbeatResponse {
  'registered'?: (boolean);
  'epoch'?: (number | string | Long);
}

export interface HeartbeatResponse__Output {
  'registered': (boolean);
  'epoch': (number);
}
