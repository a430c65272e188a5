// Original file: proto/rebound/v1/dispatcher.proto

import type { Long } from '@grpc/proto-loader';

export interface JobSummary {
  'job_id'?: (string);
  'name'?: (string);
  'state'?: (string);
  'submitted_at_ms'?: (number | string | Long);
  'finished_at_ms'?: (number | string | Long);
  'tasks_total'?: (number);
  'tasks_finished'?: (number);
  'error'?: (string);
}

export interface JobSummary__Output {
  'job_id': (string);
  'name': (string);
  'state': (string);
  'submitted_at_ms': (number);
  'finished_at_ms': (number);
  'tasks_total': (number);
  'tasks_finished': (number);
  'error': (string);
}
