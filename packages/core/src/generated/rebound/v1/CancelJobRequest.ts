// Original file: proto/rebound/v1/dispatcher.proto


export interface CancelJobRequest {
  'job_id'?: (string);
}

export interface CancelJobRequest__Output {
  'job_id': (string);
}
