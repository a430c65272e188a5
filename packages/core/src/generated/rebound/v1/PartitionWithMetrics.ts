// Original file: proto/rebound/v1/taskexecutor.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { Long } from '@grpc/proto-loader';

export interface PartitionWithMetrics {
  'partition_id'?: (_rebound_v1_ResultPartitionId | null);
  'num_subpartitions'?: (number);
  'total_bytes'?: (number | string | Long);
  'packed_subpartition_bytes'?: (Buffer | Uint8Array | string);
}

export interface PartitionWithMetrics__Output {
  'partition_id': (_rebound_v1_ResultPartitionId__Output | null);
  'num_subpartitions': (number);
  'total_bytes': (number);
  'packed_subpartition_bytes': (Buffer);
}
