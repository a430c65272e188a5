// Original file: proto/rebound/v1/taskexecutor.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from '../../rebound/v1/TaskManagerLocation.js';
import type { ShuffleWorkerLocation as _rebound_v1_ShuffleWorkerLocation, ShuffleWorkerLocation__Output as _rebound_v1_ShuffleWorkerLocation__Output } from '../../rebound/v1/ShuffleWorkerLocation.js';

export interface PartitionLocation {
  'partition_id'?: (_rebound_v1_ResultPartitionId | null);
  'location'?: (_rebound_v1_TaskManagerLocation | null);
  'shuffle_workers'?: (_rebound_v1_ShuffleWorkerLocation)[];
}

export interface PartitionLocation__Output {
  'partition_id': (_rebound_v1_ResultPartitionId__Output | null);
  'location': (_rebound_v1_TaskManagerLocation__Output | null);
  'shuffle_workers': (_rebound_v1_ShuffleWorkerLocation__Output)[];
}
