// Original file: proto/rebound/v1/jobgraph.proto

import type { JobEdge as _rebound_v1_JobEdge, JobEdge__Output as _rebound_v1_JobEdge__Output } from '../../rebound/v1/JobEdge.js';
import type { SinkDescriptor as _rebound_v1_SinkDescriptor, SinkDescriptor__Output as _rebound_v1_SinkDescriptor__Output } from '../../rebound/v1/SinkDescriptor.js';

export interface JobVertex {
  'id'?: (string);
  'name'?: (string);
  'parallelism'?: (number);
  'max_parallelism'?: (number);
  'operator_ids'?: (string)[];
  'inputs'?: (_rebound_v1_JobEdge)[];
  'source_operator_id'?: (string);
  'sink'?: (_rebound_v1_SinkDescriptor | null);
  'source_supports_batch_snapshot'?: (boolean);
}

export interface JobVertex__Output {
  'id': (string);
  'name': (string);
  'parallelism': (number);
  'max_parallelism': (number);
  'operator_ids': (string)[];
  'inputs': (_rebound_v1_JobEdge__Output)[];
  'source_operator_id': (string);
  'sink': (_rebound_v1_SinkDescriptor__Output | null);
  'source_supports_batch_snapshot': (boolean);
}
