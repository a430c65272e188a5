// Original file: proto/rebound/v1/shuffle.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';

export interface PartitionWriteOpen {
  'partition_id'?: (_rebound_v1_ResultPartitionId | null);
  'num_subpartitions'?: (number);
  'read_capability'?: (string);
}

export interface PartitionWriteOpen__Output {
  'partition_id': (_rebound_v1_ResultPartitionId__Output | null);
  'num_subpartitions': (number);
  'read_capability': (string);
}
