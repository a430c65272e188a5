// Original file: proto/rebound/v1/dispatcher.proto


export interface SubmitJobResponse {
  'job_id'?: (string);
}

export interface SubmitJobResponse__Output {
  'job_id': (string);
}
