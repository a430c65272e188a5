// Original file: proto/rebound/v1/dispatcher.proto

import type { JobGraph as _rebound_v1_JobGraph, JobGraph__Output as _rebound_v1_JobGraph__Output } from '../../rebound/v1/JobGraph.js';

export interface SubmitJobRequest {
  'job_graph'?: (_rebound_v1_JobGraph | null);
  'module_bundle'?: (Buffer | Uint8Array | string);
}

export interface SubmitJobRequest__Output {
  'job_graph': (_rebound_v1_JobGraph__Output | null);
  'module_bundle': (Buffer);
}
