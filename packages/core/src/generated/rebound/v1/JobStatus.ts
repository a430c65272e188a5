// Original file: proto/rebound/v1/dispatcher.proto

import type { VertexStatus as _rebound_v1_VertexStatus, VertexStatus__Output as _rebound_v1_VertexStatus__Output } from '../../rebound/v1/VertexStatus.js';
import type { RecoveryReport as _rebound_v1_RecoveryReport, RecoveryReport__Output as _rebound_v1_RecoveryReport__Output } from '../../rebound/v1/RecoveryReport.js';
import type { Long } from '@grpc/proto-loader';

export interface JobStatus {
  'job_id'?: (string);
  'name'?: (string);
  'state'?: (string);
  'vertices'?: (_rebound_v1_VertexStatus)[];
  'submitted_at_ms'?: (number | string | Long);
  'finished_at_ms'?: (number | string | Long);
  'failure'?: (string);
  'restarts'?: (number);
  'leader_epoch'?: (number | string | Long);
  'recoveries'?: (_rebound_v1_RecoveryReport)[];
  'notes'?: (string)[];
  'job_recovery_disabled'?: (string);
  'shuffle_type'?: (string);
}

export interface JobStatus__Output {
  'job_id': (string);
  'name': (string);
  'state': (string);
  'vertices': (_rebound_v1_VertexStatus__Output)[];
  'submitted_at_ms': (number);
  'finished_at_ms': (number);
  'failure': (string);
  'restarts': (number);
  'leader_epoch': (number);
  'recoveries': (_rebound_v1_RecoveryReport__Output)[];
  'notes': (string)[];
  'job_recovery_disabled': (string);
  'shuffle_type': (string);
}
