// @ts-nocheck
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Empty as _rebound_v1_Empty, Empty__Output as _rebound_v1_Empty__Output } from './rebound/v1/Empty.js';
import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from './rebound/v1/ExecutionAttemptId.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from './rebound/v1/IOMetrics.js';
import type { PartitionChunk as _rebound_v1_PartitionChunk, PartitionChunk__Output as _rebound_v1_PartitionChunk__Output } from './rebound/v1/PartitionChunk.js';
import type { PartitionServiceClient as _rebound_v1_PartitionServiceClient, PartitionServiceDefinition as _rebound_v1_PartitionServiceDefinition } from './rebound/v1/PartitionService.js';
import type { ReadSubpartitionsRequest as _rebound_v1_ReadSubpartitionsRequest, ReadSubpartitionsRequest__Output as _rebound_v1_ReadSubpartitionsRequest__Output } from './rebound/v1/ReadSubpartitionsRequest.js';
import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from './rebound/v1/ResultPartitionId.js';
import type { ShuffleWorkerLocation as _rebound_v1_ShuffleWorkerLocation, ShuffleWorkerLocation__Output as _rebound_v1_ShuffleWorkerLocation__Output } from './rebound/v1/ShuffleWorkerLocation.js';
import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from './rebound/v1/TaskManagerLocation.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  rebound: {
    v1: {
      Empty: MessageTypeDefinition<_rebound_v1_Empty, _rebound_v1_Empty__Output>
      ExecutionAttemptId: MessageTypeDefinition<_rebound_v1_ExecutionAttemptId, _rebound_v1_ExecutionAttemptId__Output>
      IOMetrics: MessageTypeDefinition<_rebound_v1_IOMetrics, _rebound_v1_IOMetrics__Output>
      PartitionChunk: MessageTypeDefinition<_rebound_v1_PartitionChunk, _rebound_v1_PartitionChunk__Output>
      PartitionService: SubtypeConstructor<typeof grpc.Client, _rebound_v1_PartitionServiceClient> & { service: _rebound_v1_PartitionServiceDefinition }
      ReadSubpartitionsRequest: MessageTypeDefinition<_rebound_v1_ReadSubpartitionsRequest, _rebound_v1_ReadSubpartitionsRequest__Output>
      ResultPartitionId: MessageTypeDefinition<_rebound_v1_ResultPartitionId, _rebound_v1_ResultPartitionId__Output>
      ShuffleWorkerLocation: MessageTypeDefinition<_rebound_v1_ShuffleWorkerLocation, _rebound_v1_ShuffleWorkerLocation__Output>
      TaskManagerLocation: MessageTypeDefinition<_rebound_v1_TaskManagerLocation, _rebound_v1_TaskManagerLocation__Output>
    }
  }
}
