// Original file: proto/rebound/v1/jobgraph.proto


export interface SinkDescriptor {
  'operator_id'?: (string);
  'path'?: (string);
  'collect'?: (boolean);
}

export interface SinkDescriptor__Output {
  'operator_id': (string);
  'path': (string);
  'collect': (boolean);
}
