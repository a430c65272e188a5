// Original file: proto/rebound/v1/taskexecutor.proto


export interface JobManagerHeartbeatResponse {
  'task_manager_id'?: (string);
}

export interface JobManagerHeartbeatResponse__Output {
  'task_manager_id': (string);
}
