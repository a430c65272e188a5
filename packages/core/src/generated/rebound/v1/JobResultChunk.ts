// Original file: proto/rebound/v1/dispatcher.proto

import type { Long } from '@grpc/proto-loader';

export interface JobResultChunk {
  'file_index'?: (number);
  'offset'?: (number | string | Long);
  'data'?: (Buffer | Uint8Array | string);
  'end_of_file'?: (boolean);
  'file_count'?: (number);
}

export interface JobResultChunk__Output {
  'file_index': (number);
  'offset': (number);
  'data': (Buffer);
  'end_of_file': (boolean);
  'file_count': (number);
}
