// Original file: proto/rebound/v1/common.proto


export interface ResultPartitionId {
  'job_id'?: (string);
  'vertex_id'?: (string);
  'subtask'?: (number);
  'attempt'?: (number);
}

export interface ResultPartitionId__Output {
  'job_id': (string);
  'vertex_id': (string);
  'subtask': (number);
  'attempt': (number);
}
