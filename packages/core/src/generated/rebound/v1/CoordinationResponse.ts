// Original file: proto/rebound/v1/jobmaster.proto


export interface CoordinationResponse {
  'response_json'?: (string);
}

export interface CoordinationResponse__Output {
  'response_json': (string);
}
