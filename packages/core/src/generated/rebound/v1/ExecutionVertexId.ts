// Original file: proto/rebound/v1/events.proto


export interface ExecutionVertexId {
  'vertex_id'?: (string);
  'subtask'?: (number);
}

export interface ExecutionVertexId__Output {
  'vertex_id': (string);
  'subtask': (number);
}
