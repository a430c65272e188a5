// Original file: proto/rebound/v1/dispatcher.proto


export interface CancelJobResponse {
  'state'?: (string);
}

export interface CancelJobResponse__Output {
  'state': (string);
}
