// Original file: proto/rebound/v1/events.proto

import type { Long } from '@grpc/proto-loader';

export interface SealedEventFile {
  'file_index'?: (number);
  'length'?: (number | string | Long);
}

export interface SealedEventFile__Output {
  'file_index': (number);
  'length': (number);
}
