// Original file: proto/rebound/v1/events.proto

import type { SubpartitionRange as _rebound_v1_SubpartitionRange, SubpartitionRange__Output as _rebound_v1_SubpartitionRange__Output } from '../../rebound/v1/SubpartitionRange.js';

export interface JobVertexInputInfo {
  'producer_vertex_id'?: (string);
  'subtask_ranges'?: (_rebound_v1_SubpartitionRange)[];
}

export interface JobVertexInputInfo__Output {
  'producer_vertex_id': (string);
  'subtask_ranges': (_rebound_v1_SubpartitionRange__Output)[];
}
