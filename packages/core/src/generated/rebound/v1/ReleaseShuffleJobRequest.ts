// Original file: proto/rebound/v1/shuffle.proto

import type { Long } from '@grpc/proto-loader';

export interface ReleaseShuffleJobRequest {
  'epoch'?: (number | string | Long);
  'job_id'?: (string);
  'session_id'?: (string);
}

export interface ReleaseShuffleJobRequest__Output {
  'epoch': (number);
  'job_id': (string);
  'session_id': (string);
}
