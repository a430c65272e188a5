// @ts-nocheck
import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { JobEdge as _rebound_v1_JobEdge, JobEdge__Output as _rebound_v1_JobEdge__Output } from './rebound/v1/JobEdge.js';
import type { JobGraph as _rebound_v1_JobGraph, JobGraph__Output as _rebound_v1_JobGraph__Output } from './rebound/v1/JobGraph.js';
import type { JobVertex as _rebound_v1_JobVertex, JobVertex__Output as _rebound_v1_JobVertex__Output } from './rebound/v1/JobVertex.js';
import type { SinkDescriptor as _rebound_v1_SinkDescriptor, SinkDescriptor__Output as _rebound_v1_SinkDescriptor__Output } from './rebound/v1/SinkDescriptor.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  rebound: {
    v1: {
      DistributionPattern: EnumTypeDefinition
      JobEdge: MessageTypeDefinition<_rebound_v1_JobEdge, _rebound_v1_JobEdge__Output>
      JobGraph: MessageTypeDefinition<_rebound_v1_JobGraph, _rebound_v1_JobGraph__Output>
      JobVertex: MessageTypeDefinition<_rebound_v1_JobVertex, _rebound_v1_JobVertex__Output>
      SinkDescriptor: MessageTypeDefinition<_rebound_v1_SinkDescriptor, _rebound_v1_SinkDescriptor__Output>
    }
  }
}
