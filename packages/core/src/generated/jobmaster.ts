// @ts-nocheck
import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Ack as _rebound_v1_Ack, Ack__Output as _rebound_v1_Ack__Output } from './rebound/v1/Ack.js';
import type { CoordinationRequest as _rebound_v1_CoordinationRequest, CoordinationRequest__Output as _rebound_v1_CoordinationRequest__Output } from './rebound/v1/CoordinationRequest.js';
import type { CoordinationResponse as _rebound_v1_CoordinationResponse, CoordinationResponse__Output as _rebound_v1_CoordinationResponse__Output } from './rebound/v1/CoordinationResponse.js';
import type { Empty as _rebound_v1_Empty, Empty__Output as _rebound_v1_Empty__Output } from './rebound/v1/Empty.js';
import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from './rebound/v1/ExecutionAttemptId.js';
import type { FetchJobArtifactRequest as _rebound_v1_FetchJobArtifactRequest, FetchJobArtifactRequest__Output as _rebound_v1_FetchJobArtifactRequest__Output } from './rebound/v1/FetchJobArtifactRequest.js';
import type { HeartbeatResponse as _rebound_v1_HeartbeatResponse, HeartbeatResponse__Output as _rebound_v1_HeartbeatResponse__Output } from './rebound/v1/HeartbeatResponse.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from './rebound/v1/IOMetrics.js';
import type { JobArtifact as _rebound_v1_JobArtifact, JobArtifact__Output as _rebound_v1_JobArtifact__Output } from './rebound/v1/JobArtifact.js';
import type { JobMasterGatewayClient as _rebound_v1_JobMasterGatewayClient, JobMasterGatewayDefinition as _rebound_v1_JobMasterGatewayDefinition } from './rebound/v1/JobMasterGateway.js';
import type { RegisterTaskManagerRequest as _rebound_v1_RegisterTaskManagerRequest, RegisterTaskManagerRequest__Output as _rebound_v1_RegisterTaskManagerRequest__Output } from './rebound/v1/RegisterTaskManagerRequest.js';
import type { RegisterTaskManagerResponse as _rebound_v1_RegisterTaskManagerResponse, RegisterTaskManagerResponse__Output as _rebound_v1_RegisterTaskManagerResponse__Output } from './rebound/v1/RegisterTaskManagerResponse.js';
import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from './rebound/v1/ResultPartitionId.js';
import type { ShuffleWorkerLocation as _rebound_v1_ShuffleWorkerLocation, ShuffleWorkerLocation__Output as _rebound_v1_ShuffleWorkerLocation__Output } from './rebound/v1/ShuffleWorkerLocation.js';
import type { SplitRequest as _rebound_v1_SplitRequest, SplitRequest__Output as _rebound_v1_SplitRequest__Output } from './rebound/v1/SplitRequest.js';
import type { SplitResponse as _rebound_v1_SplitResponse, SplitResponse__Output as _rebound_v1_SplitResponse__Output } from './rebound/v1/SplitResponse.js';
import type { TaskExecutionState as _rebound_v1_TaskExecutionState, TaskExecutionState__Output as _rebound_v1_TaskExecutionState__Output } from './rebound/v1/TaskExecutionState.js';
import type { TaskManagerHeartbeat as _rebound_v1_TaskManagerHeartbeat, TaskManagerHeartbeat__Output as _rebound_v1_TaskManagerHeartbeat__Output } from './rebound/v1/TaskManagerHeartbeat.js';
import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from './rebound/v1/TaskManagerLocation.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  rebound: {
    v1: {
      Ack: MessageTypeDefinition<_rebound_v1_Ack, _rebound_v1_Ack__Output>
      CoordinationRequest: MessageTypeDefinition<_rebound_v1_CoordinationRequest, _rebound_v1_CoordinationRequest__Output>
      CoordinationResponse: MessageTypeDefinition<_rebound_v1_CoordinationResponse, _rebound_v1_CoordinationResponse__Output>
      Empty: MessageTypeDefinition<_rebound_v1_Empty, _rebound_v1_Empty__Output>
      ExecutionAttemptId: MessageTypeDefinition<_rebound_v1_ExecutionAttemptId, _rebound_v1_ExecutionAttemptId__Output>
      ExecutionState: EnumTypeDefinition
      FetchJobArtifactRequest: MessageTypeDefinition<_rebound_v1_FetchJobArtifactRequest, _rebound_v1_FetchJobArtifactRequest__Output>
      HeartbeatResponse: MessageTypeDefinition<_rebound_v1_HeartbeatResponse, _rebound_v1_HeartbeatResponse__Output>
      IOMetrics: MessageTypeDefinition<_rebound_v1_IOMetrics, _rebound_v1_IOMetrics__Output>
      JobArtifact: MessageTypeDefinition<_rebound_v1_JobArtifact, _rebound_v1_JobArtifact__Output>
      JobMasterGateway: SubtypeConstructor<typeof grpc.Client, _rebound_v1_JobMasterGatewayClient> & { service: _rebound_v1_JobMasterGatewayDefinition }
      RegisterTaskManagerRequest: MessageTypeDefinition<_rebound_v1_RegisterTaskManagerRequest, _rebound_v1_RegisterTaskManagerRequest__Output>
      RegisterTaskManagerResponse: MessageTypeDefinition<_rebound_v1_RegisterTaskManagerResponse, _rebound_v1_RegisterTaskManagerResponse__Output>
      ResultPartitionId: MessageTypeDefinition<_rebound_v1_ResultPartitionId, _rebound_v1_ResultPartitionId__Output>
      ShuffleWorkerLocation: MessageTypeDefinition<_rebound_v1_ShuffleWorkerLocation, _rebound_v1_ShuffleWorkerLocation__Output>
      SplitRequest: MessageTypeDefinition<_rebound_v1_SplitRequest, _rebound_v1_SplitRequest__Output>
      SplitResponse: MessageTypeDefinition<_rebound_v1_SplitResponse, _rebound_v1_SplitResponse__Output>
      TaskExecutionState: MessageTypeDefinition<_rebound_v1_TaskExecutionState, _rebound_v1_TaskExecutionState__Output>
      TaskManagerHeartbeat: MessageTypeDefinition<_rebound_v1_TaskManagerHeartbeat, _rebound_v1_TaskManagerHeartbeat__Output>
      TaskManagerLocation: MessageTypeDefinition<_rebound_v1_TaskManagerLocation, _rebound_v1_TaskManagerLocation__Output>
    }
  }
}
