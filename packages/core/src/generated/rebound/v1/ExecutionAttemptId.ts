// Original file: proto/rebound/v1/common.proto


export interface ExecutionAttemptId {
  'job_id'?: (string);
  'vertex_id'?: (string);
  'subtask'?: (number);
  'attempt'?: (number);
}

export interface ExecutionAttemptId__Output {
  'job_id': (string);
  'vertex_id': (string);
  'subtask': (number);
  'attempt': (number);
}
