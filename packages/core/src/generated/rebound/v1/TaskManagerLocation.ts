// Original file: proto/rebound/v1/common.proto


export interface TaskManagerLocation {
  'task_manager_id'?: (string);
  'address'?: (string);
}

export interface TaskManagerLocation__Output {
  'task_manager_id': (string);
  'address': (string);
}
