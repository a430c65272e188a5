// Original file: proto/rebound/v1/taskexecutor.proto

import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from '../../rebound/v1/ResultPartitionId.js';
import type { Long } from '@grpc/proto-loader';

export interface ReleasePartitionsRequest {
  'epoch'?: (number | string | Long);
  'partitions'?: (_rebound_v1_ResultPartitionId)[];
  'session_id'?: (string);
}

export interface ReleasePartitionsRequest__Output {
  'epoch': (number);
  'partitions': (_rebound_v1_ResultPartitionId__Output)[];
  'session_id': (string);
}
