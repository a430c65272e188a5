// Original file: proto/rebound/v1/taskexecutor.proto


export interface CoordinatorResponses {
  'operator_id'?: (string);
  'response_json'?: (string)[];
  'incomplete'?: (boolean);
}

export interface CoordinatorResponses__Output {
  'operator_id': (string);
  'response_json': (string)[];
  'incomplete': (boolean);
}
