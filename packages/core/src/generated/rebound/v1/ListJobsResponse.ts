// Original file: proto/rebound/v1/dispatcher.proto

import type { JobSummary as _rebound_v1_JobSummary, JobSummary__Output as _rebound_v1_JobSummary__Output } from '../../rebound/v1/JobSummary.js';

export interface ListJobsResponse {
  'jobs'?: (_rebound_v1_JobSummary)[];
}

export interface ListJobsResponse__Output {
  'jobs': (_rebound_v1_JobSummary__Output)[];
}
