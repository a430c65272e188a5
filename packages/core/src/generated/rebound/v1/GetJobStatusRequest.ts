// Original file: proto/rebound/v1/dispatcher.proto


export interface GetJobStatusRequest {
  'job_id'?: (string);
}

export interface GetJobStatusRequest__Output {
  'job_id': (string);
}
