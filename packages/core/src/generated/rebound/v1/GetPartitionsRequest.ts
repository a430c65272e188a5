// Original file: proto/rebound/v1/taskexecutor.proto

import type { Long } from '@grpc/proto-loader';

export interface GetPartitionsRequest {
  'epoch'?: (number | string | Long);
  'job_id'?: (string);
  'session_id'?: (string);
  'adopt_tasks'?: (boolean);
}

export interface GetPartitionsRequest__Output {
  'epoch': (number);
  'job_id': (string);
  'session_id': (string);
  'adopt_tasks': (boolean);
}
