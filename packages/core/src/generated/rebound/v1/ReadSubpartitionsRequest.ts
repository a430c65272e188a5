// Original file: proto/rebound/v1/partition.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';

export interface ReadSubpartitionsRequest {
  'partition_id'?: (_rebound_v1_ResultPartitionId | null);
  'subpartition_start'?: (number);
  'subpartition_end'?: (number);
  'read_capability'?: (string);
}

export interface ReadSubpartitionsRequest__Output {
  'partition_id': (_rebound_v1_ResultPartitionId__Output | null);
  'subpartition_start': (number);
  'subpartition_end': (number);
  'read_capability': (string);
}
