// Original file: proto/rebound/v1/taskexecutor.proto

import type { PartitionWithMetrics as _rebound_v1_PartitionWithMetrics, PartitionWithMetrics__Output as _rebound_v1_PartitionWithMetrics__Output } from '../../rebound/v1/PartitionWithMetrics.js';

export interface GetPartitionsResponse {
  'partitions'?: (_rebound_v1_PartitionWithMetrics)[];
}

export interface GetPartitionsResponse__Output {
  'partitions': (_rebound_v1_PartitionWithMetrics__Output)[];
}
