// Original file: proto/rebound/v1/taskexecutor.proto

import type { DistributionPattern as _rebound_v1_DistributionPattern, DistributionPattern__Output as _rebound_v1_DistributionPattern__Output } from '../../rebound/v1/DistributionPattern.js';
import type { ShuffleWorkerLocation as _rebound_v1_ShuffleWorkerLocation, ShuffleWorkerLocation__Output as _rebound_v1_ShuffleWorkerLocation__Output } from '../../rebound/v1/ShuffleWorkerLocation.js';

export interface ResultPartitionDeploymentDescriptor {
  'num_subpartitions'?: (number);
  'distribution'?: (_rebound_v1_DistributionPattern);
  'key_selector_id'?: (string);
  'combiner_id'?: (string);
  'shuffle_workers'?: (_rebound_v1_ShuffleWorkerLocation)[];
}

export interface ResultPartitionDeploymentDescriptor__Output {
  'num_subpartitions': (number);
  'distribution': (_rebound_v1_DistributionPattern__Output);
  'key_selector_id': (string);
  'combiner_id': (string);
  'shuffle_workers': (_rebound_v1_ShuffleWorkerLocation__Output)[];
}
