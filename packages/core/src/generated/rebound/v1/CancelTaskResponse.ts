// Original file: proto/rebound/v1/taskexecutor.proto


export interface CancelTaskResponse {
  'found'?: (boolean);
}

export interface CancelTaskResponse__Output {
  'found': (boolean);
}
