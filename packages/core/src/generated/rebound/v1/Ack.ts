// Original file: proto/rebound/v1/jobmaster.proto


export interface Ack {
  'accepted'?: (boolean);
}

export interface Ack__Output {
  'accepted': (boolean);
}
