// Original file: proto/rebound/v1/taskexecutor.proto


export interface ReleasePartitionsResponse {
  'released'?: (number);
}

export interface ReleasePartitionsResponse__Output {
  'released': (number);
}
