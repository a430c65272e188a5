// Original file: proto/rebound/v1/taskexecutor.proto


export interface DeployTaskResponse {
  'accepted'?: (boolean);
}

export interface DeployTaskResponse__Output {
  'accepted': (boolean);
}
