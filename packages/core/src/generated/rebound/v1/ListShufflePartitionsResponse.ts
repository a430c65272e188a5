// Original file: proto/rebound/v1/shuffle.proto

import type { PartitionWithMetrics as _rebound_v1_PartitionWithMetrics, PartitionWithMetrics__Output as _rebound_v1_PartitionWithMetrics__Output } from '../../rebound/v1/PartitionWithMetrics.js';

export interface ListShufflePartitionsResponse {
  'partitions'?: (_rebound_v1_PartitionWithMetrics)[];
}

export interface ListShufflePartitionsResponse__Output {
  'partitions': (_rebound_v1_PartitionWithMetrics__Output)[];
}
