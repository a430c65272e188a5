// Original file: proto/rebound/v1/jobgraph.proto

import type { JobVertex as _rebound_v1_JobVertex, JobVertex__Output as _rebound_v1_JobVertex__Output } from '../../rebound/v1/JobVertex.js';
import type { Long } from '@grpc/proto-loader';

export interface JobGraph {
  'job_id'?: (string);
  'name'?: (string);
  'vertices'?: (_rebound_v1_JobVertex)[];
  'job_args'?: (string)[];
  'config'?: ({[key: string]: string});
  'module_digest'?: (string);
  'submitted_at_ms'?: (number | string | Long);
  'working_directory'?: (string);
}

export interface JobGraph__Output {
  'job_id': (string);
  'name': (string);
  'vertices': (_rebound_v1_JobVertex__Output)[];
  'job_args': (string)[];
  'config': ({[key: string]: string});
  'module_digest': (string);
  'submitted_at_ms': (number);
  'working_directory': (string);
}
