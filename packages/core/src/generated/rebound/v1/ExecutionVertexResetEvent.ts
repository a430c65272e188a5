// Original file: proto/rebound/v1/events.proto

import type { ExecutionVertexId as _rebound_v1_ExecutionVertexId, ExecutionVertexId__Output as _rebound_v1_ExecutionVertexId__Output } from '../../rebound/v1/ExecutionVertexId.js';

export interface ExecutionVertexResetEvent {
  'vertices'?: (_rebound_v1_ExecutionVertexId)[];
}

export interface ExecutionVertexResetEvent__Output {
  'vertices': (_rebound_v1_ExecutionVertexId__Output)[];
}
