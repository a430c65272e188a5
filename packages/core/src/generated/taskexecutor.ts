// @ts-nocheck
import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { Ack as _rebound_v1_Ack, Ack__Output as _rebound_v1_Ack__Output } from './rebound/v1/Ack.js';
import type { CancelTaskRequest as _rebound_v1_CancelTaskRequest, CancelTaskRequest__Output as _rebound_v1_CancelTaskRequest__Output } from './rebound/v1/CancelTaskRequest.js';
import type { CancelTaskResponse as _rebound_v1_CancelTaskResponse, CancelTaskResponse__Output as _rebound_v1_CancelTaskResponse__Output } from './rebound/v1/CancelTaskResponse.js';
import type { CoordinationRequest as _rebound_v1_CoordinationRequest, CoordinationRequest__Output as _rebound_v1_CoordinationRequest__Output } from './rebound/v1/CoordinationRequest.js';
import type { CoordinationResponse as _rebound_v1_CoordinationResponse, CoordinationResponse__Output as _rebound_v1_CoordinationResponse__Output } from './rebound/v1/CoordinationResponse.js';
import type { CoordinatorResponses as _rebound_v1_CoordinatorResponses, CoordinatorResponses__Output as _rebound_v1_CoordinatorResponses__Output } from './rebound/v1/CoordinatorResponses.js';
import type { DeployTaskResponse as _rebound_v1_DeployTaskResponse, DeployTaskResponse__Output as _rebound_v1_DeployTaskResponse__Output } from './rebound/v1/DeployTaskResponse.js';
import type { DisconnectJobRequest as _rebound_v1_DisconnectJobRequest, DisconnectJobRequest__Output as _rebound_v1_DisconnectJobRequest__Output } from './rebound/v1/DisconnectJobRequest.js';
import type { DisconnectJobResponse as _rebound_v1_DisconnectJobResponse, DisconnectJobResponse__Output as _rebound_v1_DisconnectJobResponse__Output } from './rebound/v1/DisconnectJobResponse.js';
import type { Empty as _rebound_v1_Empty, Empty__Output as _rebound_v1_Empty__Output } from './rebound/v1/Empty.js';
import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from './rebound/v1/ExecutionAttemptId.js';
import type { FetchJobArtifactRequest as _rebound_v1_FetchJobArtifactRequest, FetchJobArtifactRequest__Output as _rebound_v1_FetchJobArtifactRequest__Output } from './rebound/v1/FetchJobArtifactRequest.js';
import type { GetPartitionsRequest as _rebound_v1_GetPartitionsRequest, GetPartitionsRequest__Output as _rebound_v1_GetPartitionsRequest__Output } from './rebound/v1/GetPartitionsRequest.js';
import type { GetPartitionsResponse as _rebound_v1_GetPartitionsResponse, GetPartitionsResponse__Output as _rebound_v1_GetPartitionsResponse__Output } from './rebound/v1/GetPartitionsResponse.js';
import type { HeartbeatResponse as _rebound_v1_HeartbeatResponse, HeartbeatResponse__Output as _rebound_v1_HeartbeatResponse__Output } from './rebound/v1/HeartbeatResponse.js';
import type { HeldTask as _rebound_v1_HeldTask, HeldTask__Output as _rebound_v1_HeldTask__Output } from './rebound/v1/HeldTask.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from './rebound/v1/IOMetrics.js';
import type { InputGateDeploymentDescriptor as _rebound_v1_InputGateDeploymentDescriptor, InputGateDeploymentDescriptor__Output as _rebound_v1_InputGateDeploymentDescriptor__Output } from './rebound/v1/InputGateDeploymentDescriptor.js';
import type { JobArtifact as _rebound_v1_JobArtifact, JobArtifact__Output as _rebound_v1_JobArtifact__Output } from './rebound/v1/JobArtifact.js';
import type { JobEdge as _rebound_v1_JobEdge, JobEdge__Output as _rebound_v1_JobEdge__Output } from './rebound/v1/JobEdge.js';
import type { JobGraph as _rebound_v1_JobGraph, JobGraph__Output as _rebound_v1_JobGraph__Output } from './rebound/v1/JobGraph.js';
import type { JobManagerHeartbeat as _rebound_v1_JobManagerHeartbeat, JobManagerHeartbeat__Output as _rebound_v1_JobManagerHeartbeat__Output } from './rebound/v1/JobManagerHeartbeat.js';
import type { JobManagerHeartbeatResponse as _rebound_v1_JobManagerHeartbeatResponse, JobManagerHeartbeatResponse__Output as _rebound_v1_JobManagerHeartbeatResponse__Output } from './rebound/v1/JobManagerHeartbeatResponse.js';
import type { JobMasterGatewayClient as _rebound_v1_JobMasterGatewayClient, JobMasterGatewayDefinition as _rebound_v1_JobMasterGatewayDefinition } from './rebound/v1/JobMasterGateway.js';
import type { JobVertex as _rebound_v1_JobVertex, JobVertex__Output as _rebound_v1_JobVertex__Output } from './rebound/v1/JobVertex.js';
import type { PartitionLocation as _rebound_v1_PartitionLocation, PartitionLocation__Output as _rebound_v1_PartitionLocation__Output } from './rebound/v1/PartitionLocation.js';
import type { PartitionWithMetrics as _rebound_v1_PartitionWithMetrics, PartitionWithMetrics__Output as _rebound_v1_PartitionWithMetrics__Output } from './rebound/v1/PartitionWithMetrics.js';
import type { RegisterTaskManagerRequest as _rebound_v1_RegisterTaskManagerRequest, RegisterTaskManagerRequest__Output as _rebound_v1_RegisterTaskManagerRequest__Output } from './rebound/v1/RegisterTaskManagerRequest.js';
import type { RegisterTaskManagerResponse as _rebound_v1_RegisterTaskManagerResponse, RegisterTaskManagerResponse__Output as _rebound_v1_RegisterTaskManagerResponse__Output } from './rebound/v1/RegisterTaskManagerResponse.js';
import type { ReleasePartitionsRequest as _rebound_v1_ReleasePartitionsRequest, ReleasePartitionsRequest__Output as _rebound_v1_ReleasePartitionsRequest__Output } from './rebound/v1/ReleasePartitionsRequest.js';
import type { ReleasePartitionsResponse as _rebound_v1_ReleasePartitionsResponse, ReleasePartitionsResponse__Output as _rebound_v1_ReleasePartitionsResponse__Output } from './rebound/v1/ReleasePartitionsResponse.js';
import type { ResultPartitionDeploymentDescriptor as _rebound_v1_ResultPartitionDeploymentDescriptor, ResultPartitionDeploymentDescriptor__Output as _rebound_v1_ResultPartitionDeploymentDescriptor__Output } from './rebound/v1/ResultPartitionDeploymentDescriptor.js';
import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from './rebound/v1/ResultPartitionId.js';
import type { ShuffleWorkerLocation as _rebound_v1_ShuffleWorkerLocation, ShuffleWorkerLocation__Output as _rebound_v1_ShuffleWorkerLocation__Output } from './rebound/v1/ShuffleWorkerLocation.js';
import type { SinkDescriptor as _rebound_v1_SinkDescriptor, SinkDescriptor__Output as _rebound_v1_SinkDescriptor__Output } from './rebound/v1/SinkDescriptor.js';
import type { SplitRequest as _rebound_v1_SplitRequest, SplitRequest__Output as _rebound_v1_SplitRequest__Output } from './rebound/v1/SplitRequest.js';
import type { SplitResponse as _rebound_v1_SplitResponse, SplitResponse__Output as _rebound_v1_SplitResponse__Output } from './rebound/v1/SplitResponse.js';
import type { TaskDeploymentDescriptor as _rebound_v1_TaskDeploymentDescriptor, TaskDeploymentDescriptor__Output as _rebound_v1_TaskDeploymentDescriptor__Output } from './rebound/v1/TaskDeploymentDescriptor.js';
import type { TaskExecutionState as _rebound_v1_TaskExecutionState, TaskExecutionState__Output as _rebound_v1_TaskExecutionState__Output } from './rebound/v1/TaskExecutionState.js';
import type { TaskExecutorGatewayClient as _rebound_v1_TaskExecutorGatewayClient, TaskExecutorGatewayDefinition as _rebound_v1_TaskExecutorGatewayDefinition } from './rebound/v1/TaskExecutorGateway.js';
import type { TaskManagerHeartbeat as _rebound_v1_TaskManagerHeartbeat, TaskManagerHeartbeat__Output as _rebound_v1_TaskManagerHeartbeat__Output } from './rebound/v1/TaskManagerHeartbeat.js';
import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from './rebound/v1/TaskManagerLocation.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  rebound: {
    v1: {
      Ack: MessageTypeDefinition<_rebound_v1_Ack, _rebound_v1_Ack__Output>
      CancelTaskRequest: MessageTypeDefinition<_rebound_v1_CancelTaskRequest, _rebound_v1_CancelTaskRequest__Output>
      CancelTaskResponse: MessageTypeDefinition<_rebound_v1_CancelTaskResponse, _rebound_v1_CancelTaskResponse__Output>
      CoordinationRequest: MessageTypeDefinition<_rebound_v1_CoordinationRequest, _rebound_v1_CoordinationRequest__Output>
      CoordinationResponse: MessageTypeDefinition<_rebound_v1_CoordinationResponse, _rebound_v1_CoordinationResponse__Output>
      CoordinatorResponses: MessageTypeDefinition<_rebound_v1_CoordinatorResponses, _rebound_v1_CoordinatorResponses__Output>
      DeployTaskResponse: MessageTypeDefinition<_rebound_v1_DeployTaskResponse, _rebound_v1_DeployTaskResponse__Output>
      DisconnectJobRequest: MessageTypeDefinition<_rebound_v1_DisconnectJobRequest, _rebound_v1_DisconnectJobRequest__Output>
      DisconnectJobResponse: MessageTypeDefinition<_rebound_v1_DisconnectJobResponse, _rebound_v1_DisconnectJobResponse__Output>
      DistributionPattern: EnumTypeDefinition
      Empty: MessageTypeDefinition<_rebound_v1_Empty, _rebound_v1_Empty__Output>
      ExecutionAttemptId: MessageTypeDefinition<_rebound_v1_ExecutionAttemptId, _rebound_v1_ExecutionAttemptId__Output>
      ExecutionState: EnumTypeDefinition
      FetchJobArtifactRequest: MessageTypeDefinition<_rebound_v1_FetchJobArtifactRequest, _rebound_v1_FetchJobArtifactRequest__Output>
      GetPartitionsRequest: MessageTypeDefinition<_rebound_v1_GetPartitionsRequest, _rebound_v1_GetPartitionsRequest__Output>
      GetPartitionsResponse: MessageTypeDefinition<_rebound_v1_GetPartitionsResponse, _rebound_v1_GetPartitionsResponse__Output>
      HeartbeatResponse: MessageTypeDefinition<_rebound_v1_HeartbeatResponse, _rebound_v1_HeartbeatResponse__Output>
      HeldTask: MessageTypeDefinition<_rebound_v1_HeldTask, _rebound_v1_HeldTask__Output>
      IOMetrics: MessageTypeDefinition<_rebound_v1_IOMetrics, _rebound_v1_IOMetrics__Output>
      InputGateDeploymentDescriptor: MessageTypeDefinition<_rebound_v1_InputGateDeploymentDescriptor, _rebound_v1_InputGateDeploymentDescriptor__Output>
      JobArtifact: MessageTypeDefinition<_rebound_v1_JobArtifact, _rebound_v1_JobArtifact__Output>
      JobEdge: MessageTypeDefinition<_rebound_v1_JobEdge, _rebound_v1_JobEdge__Output>
      JobGraph: MessageTypeDefinition<_rebound_v1_JobGraph, _rebound_v1_JobGraph__Output>
      JobManagerHeartbeat: MessageTypeDefinition<_rebound_v1_JobManagerHeartbeat, _rebound_v1_JobManagerHeartbeat__Output>
      JobManagerHeartbeatResponse: MessageTypeDefinition<_rebound_v1_JobManagerHeartbeatResponse, _rebound_v1_JobManagerHeartbeatResponse__Output>
      JobMasterGateway: SubtypeConstructor<typeof grpc.Client, _rebound_v1_JobMasterGatewayClient> & { service: _rebound_v1_JobMasterGatewayDefinition }
      JobVertex: MessageTypeDefinition<_rebound_v1_JobVertex, _rebound_v1_JobVertex__Output>
      PartitionLocation: MessageTypeDefinition<_rebound_v1_PartitionLocation, _rebound_v1_PartitionLocation__Output>
      PartitionWithMetrics: MessageTypeDefinition<_rebound_v1_PartitionWithMetrics, _rebound_v1_PartitionWithMetrics__Output>
      RegisterTaskManagerRequest: MessageTypeDefinition<_rebound_v1_RegisterTaskManagerRequest, _rebound_v1_RegisterTaskManagerRequest__Output>
      RegisterTaskManagerResponse: MessageTypeDefinition<_rebound_v1_RegisterTaskManagerResponse, _rebound_v1_RegisterTaskManagerResponse__Output>
      ReleasePartitionsRequest: MessageTypeDefinition<_rebound_v1_ReleasePartitionsRequest, _rebound_v1_ReleasePartitionsRequest__Output>
      ReleasePartitionsResponse: MessageTypeDefinition<_rebound_v1_ReleasePartitionsResponse, _rebound_v1_ReleasePartitionsResponse__Output>
      ResultPartitionDeploymentDescriptor: MessageTypeDefinition<_rebound_v1_ResultPartitionDeploymentDescriptor, _rebound_v1_ResultPartitionDeploymentDescriptor__Output>
      ResultPartitionId: MessageTypeDefinition<_rebound_v1_ResultPartitionId, _rebound_v1_ResultPartitionId__Output>
      ShuffleWorkerLocation: MessageTypeDefinition<_rebound_v1_ShuffleWorkerLocation, _rebound_v1_ShuffleWorkerLocation__Output>
      SinkDescriptor: MessageTypeDefinition<_rebound_v1_SinkDescriptor, _rebound_v1_SinkDescriptor__Output>
      SplitRequest: MessageTypeDefinition<_rebound_v1_SplitRequest, _rebound_v1_SplitRequest__Output>
      SplitResponse: MessageTypeDefinition<_rebound_v1_SplitResponse, _rebound_v1_SplitResponse__Output>
      TaskDeploymentDescriptor: MessageTypeDefinition<_rebound_v1_TaskDeploymentDescriptor, _rebound_v1_TaskDeploymentDescriptor__Output>
      TaskExecutionState: MessageTypeDefinition<_rebound_v1_TaskExecutionState, _rebound_v1_TaskExecutionState__Output>
      TaskExecutorGateway: SubtypeConstructor<typeof grpc.Client, _rebound_v1_TaskExecutorGatewayClient> & { service: _rebound_v1_TaskExecutorGatewayDefinition }
      TaskManagerHeartbeat: MessageTypeDefinition<_rebound_v1_TaskManagerHeartbeat, _rebound_v1_TaskManagerHeartbeat__Output>
      TaskManagerLocation: MessageTypeDefinition<_rebound_v1_TaskManagerLocation, _rebound_v1_TaskManagerLocation__Output>
    }
  }
}
