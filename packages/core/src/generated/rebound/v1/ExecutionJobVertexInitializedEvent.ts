// Original file: proto/rebound/v1/events.proto

import type { JobVertexInputInfo as _rebound_v1_JobVertexInputInfo, JobVertexInputInfo__Output as _rebound_v1_JobVertexInputInfo__Output } from '../../rebound/v1/JobVertexInputInfo.js';

export interface ExecutionJobVertexInitializedEvent {
  'vertex_id'?: (string);
  'parallelism'?: (number);
  'inputs'?: (_rebound_v1_JobVertexInputInfo)[];
}

export interface ExecutionJobVertexInitializedEvent__Output {
  'vertex_id': (string);
  'parallelism': (number);
  'inputs': (_rebound_v1_JobVertexInputInfo__Output)[];
}
