// Original file: proto/rebound/v1/jobmaster.proto

import type { Long } from '@grpc/proto-loader';

export interface SplitResponse {
  'split_json'?: (string);
  'no_more_splits'?: (boolean);
  'retry_after_ms'?: (number | string | Long);
}

export interface SplitResponse__Output {
  'split_json': (string);
  'no_more_splits': (boolean);
  'retry_after_ms': (number);
}
