// Original file: proto/rebound/v1/common.proto

import type { Long } from '@grpc/proto-loader';

export interface IOMetrics {
  'records_in'?: (number | string | Long);
  'records_out'?: (number | string | Long);
  'bytes_in'?: (number | string | Long);
  'bytes_out'?: (number | string | Long);
  'subpartition_bytes'?: (number | string | Long)[];
}

export interface IOMetrics__Output {
  'records_in': (number);
  'records_out': (number);
  'bytes_in': (number);
  'bytes_out': (number);
  'subpartition_bytes': (number)[];
}
