// Original file: proto/rebound/v1/taskexecutor.proto

import type { Long } from '@grpc/proto-loader';

export interface JobManagerHeartbeat {
  'epoch'?: (number | string | Long);
  'session_id'?: (string);
}

export interface JobManagerHeartbeat__Output {
  'epoch': (number);
  'session_id': (string);
}
