// Original file: proto/rebound/v1/shuffle.proto

import type { PartitionWriteOpen as _rebound_v1_PartitionWriteOpen, PartitionWriteOpen__Output as _rebound_v1_PartitionWriteOpen__Output } from '../../rebound/v1/PartitionWriteOpen.js';
import type { PartitionWriteCommit as _rebound_v1_PartitionWriteCommit, PartitionWriteCommit__Output as _rebound_v1_PartitionWriteCommit__Output } from '../../rebound/v1/PartitionWriteCommit.js';

export interface PartitionWriteMessage {
  'open'?: (_rebound_v1_PartitionWriteOpen | null);
  'blocks'?: (Buffer | Uint8Array | string);
  'commit'?: (_rebound_v1_PartitionWriteCommit | null);
  'kind'?: "open"|"blocks"|"commit";
}

export interface PartitionWriteMessage__Output {
  'open'?: (_rebound_v1_PartitionWriteOpen__Output | null);
  'blocks'?: (Buffer);
  'commit'?: (_rebound_v1_PartitionWriteCommit__Output | null);
  'kind'?: "open"|"blocks"|"commit";
}
