// Original file: proto/rebound/v1/taskexecutor.proto

import type { PartitionWithMetrics as _rebound_v1_PartitionWithMetrics, PartitionWithMetrics__Output as _rebound_v1_PartitionWithMetrics__Output } from '../../rebound/v1/PartitionWithMetrics.js';
import type { HeldTask as _rebound_v1_HeldTask, HeldTask__Output as _rebound_v1_HeldTask__Output } from '../../rebound/v1/HeldTask.js';

export interface GetPartitionsResponse {
  'partitions'?: (_rebound_v1_PartitionWithMetrics)[];
  'tasks'?: (_rebound_v1_HeldTask)[];
}

export interface GetPartitionsResponse__Output {
  'partitions': (_rebound_v1_PartitionWithMetrics__Output)[];
  'tasks': (_rebound_v1_HeldTask__Output)[];
}
