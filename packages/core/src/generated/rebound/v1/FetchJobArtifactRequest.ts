// Original file: proto/rebound/v1/jobmaster.proto

import type { Long } from '@grpc/proto-loader';

export interface FetchJobArtifactRequest {
  'job_id'?: (string);
  'epoch'?: (number | string | Long);
  'task_manager_id'?: (string);
  'session_id'?: (string);
}

export interface FetchJobArtifactRequest__Output {
  'job_id': (string);
  'epoch': (number);
  'task_manager_id': (string);
  'session_id': (string);
}
