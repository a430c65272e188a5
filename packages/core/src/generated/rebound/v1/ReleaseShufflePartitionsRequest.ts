// Original file: proto/rebound/v1/shuffle.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { Long } from '@grpc/proto-loader';

export interface ReleaseShufflePartitionsRequest {
  'epoch'?: (number | string | Long);
  'partitions'?: (_rebound_v1_ResultPartitionId)[];
  'session_id'?: (string);
}

export interface ReleaseShufflePartitionsRequest__Output {
  'epoch': (number);
  'partitions': (_rebound_v1_ResultPartitionId__Output)[];
  'session_id': (string);
}
