// Original file: proto/rebound/v1/taskexecutor.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from '../../rebound/v1/TaskManagerLocation.js';

export interface PartitionLocation {
  'partition_id'?: (_rebound_v1_ResultPartitionId | null);
  'location'?: (_rebound_v1_TaskManagerLocation | null);
}

export interface PartitionLocation__Output {
  'partition_id': (_rebound_v1_ResultPartitionId__Output | null);
  'location': (_rebound_v1_TaskManagerLocation__Output | null);
}
