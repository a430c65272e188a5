// Original file: proto/rebound/v1/taskexecutor.proto

import type { DistributionPattern as _rebound_v1_DistributionPattern, DistributionPattern__Output as _rebound_v1_DistributionPattern__Output } from '../../rebound/v1/DistributionPattern.js';
import type { PartitionLocation as _rebound_v1_PartitionLocation, PartitionLocation__Output as _rebound_v1_PartitionLocation__Output } from '../../rebound/v1/PartitionLocation.js';

export interface InputGateDeploymentDescriptor {
  'input_index'?: (number);
  'producer_vertex_id'?: (string);
  'distribution'?: (_rebound_v1_DistributionPattern);
  'subpartition_start'?: (number);
  'subpartition_end'?: (number);
  'partitions'?: (_rebound_v1_PartitionLocation)[];
}

export interface InputGateDeploymentDescriptor__Output {
  'input_index': (number);
  'producer_vertex_id': (string);
  'distribution': (_rebound_v1_DistributionPattern__Output);
  'subpartition_start': (number);
  'subpartition_end': (number);
  'partitions': (_rebound_v1_PartitionLocation__Output)[];
}
