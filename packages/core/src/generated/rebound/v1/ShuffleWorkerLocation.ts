// Original file: proto/rebound/v1/common.proto


export interface ShuffleWorkerLocation {
  'worker_id'?: (string);
  'address'?: (string);
}

export interface ShuffleWorkerLocation__Output {
  'worker_id': (string);
  'address': (string);
}
