// Original file: proto/rebound/v1/dispatcher.proto

import type { Long } from '@grpc/proto-loader';

export interface FetchJobResultRequest {
  'job_id'?: (string);
  'file_index'?: (number);
  'offset'?: (number | string | Long);
  'max_chunk_bytes'?: (number);
}

export interface FetchJobResultRequest__Output {
  'job_id': (string);
  'file_index': (number);
  'offset': (number);
  'max_chunk_bytes': (number);
}
