// Original file: proto/rebound/v1/jobgraph.proto

import type { DistributionPattern as _rebound_v1_DistributionPattern, DistributionPattern__Output as _rebound_v1_DistributionPattern__Output } from '../../rebound/v1/DistributionPattern.js';

export interface JobEdge {
  'source_vertex_id'?: (string);
  'distribution'?: (_rebound_v1_DistributionPattern);
  'key_selector_id'?: (string);
  'combiner_id'?: (string);
}

export interface JobEdge__Output {
  'source_vertex_id': (string);
  'distribution': (_rebound_v1_DistributionPattern__Output);
  'key_selector_id': (string);
  'combiner_id': (string);
}
