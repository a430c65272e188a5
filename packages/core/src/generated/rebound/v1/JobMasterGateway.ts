// Original file: proto/rebound/v1/jobmaster.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { Ack as _rebound_v1_Ack, Ack__Output as _rebound_v1_Ack__Output } from '../../rebound/v1/Ack.js';
import type { CoordinationRequest as _rebound_v1_CoordinationRequest, CoordinationRequest__Output as _rebound_v1_CoordinationRequest__Output } from '../../rebound/v1/CoordinationRequest.js';
import type { CoordinationResponse as _rebound_v1_CoordinationResponse, CoordinationResponse__Output as _rebound_v1_CoordinationResponse__Output } from '../../rebound/v1/CoordinationResponse.js';
import type { FetchJobArtifactRequest as _rebound_v1_FetchJobArtifactRequest, FetchJobArtifactRequest__Output as _rebound_v1_FetchJobArtifactRequest__Output } from '../../rebound/v1/FetchJobArtifactRequest.js';
import type { HeartbeatResponse as _rebound_v1_HeartbeatResponse, HeartbeatResponse__Output as _rebound_v1_HeartbeatResponse__Output } from '../../rebound/v1/HeartbeatResponse.js';
import type { JobArtifact as _rebound_v1_JobArtifact, JobArtifact__Output as _rebound_v1_JobArtifact__Output } from '../../rebound/v1/JobArtifact.js';
import type { RegisterTaskManagerRequest as _rebound_v1_RegisterTaskManagerRequest, RegisterTaskManagerRequest__Output as _rebound_v1_RegisterTaskManagerRequest__Output } from '../../rebound/v1/RegisterTaskManagerRequest.js';
import type { RegisterTaskManagerResponse as _rebound_v1_RegisterTaskManagerResponse, RegisterTaskManagerResponse__Output as _rebound_v1_RegisterTaskManagerResponse__Output } from '../../rebound/v1/RegisterTaskManagerResponse.js';
import type { SplitRequest as _rebound_v1_SplitRequest, SplitRequest__Output as _rebound_v1_SplitRequest__Output } from '../../rebound/v1/SplitRequest.js';
import type { SplitResponse as _rebound_v1_SplitResponse, SplitResponse__Output as _rebound_v1_SplitResponse__Output } from '../../rebound/v1/SplitResponse.js';
import type { TaskExecutionState as _rebound_v1_TaskExecutionState, TaskExecutionState__Output as _rebound_v1_TaskExecutionState__Output } from '../../rebound/v1/TaskExecutionState.js';
import type { TaskManagerHeartbeat as _rebound_v1_TaskManagerHeartbeat, TaskManagerHeartbeat__Output as _rebound_v1_TaskManagerHeartbeat__Output } from '../../rebound/v1/TaskManagerHeartbeat.js';

export interface JobMasterGatewayClient extends grpc.Client {
  FetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  FetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  FetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  FetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  fetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  fetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  fetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  fetchJobArtifact(argument: _rebound_v1_FetchJobArtifactRequest, callback: grpc.requestCallback<_rebound_v1_JobArtifact__Output>): grpc.ClientUnaryCall;
  
  Heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  Heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeat(argument: _rebound_v1_TaskManagerHeartbeat, callback: grpc.requestCallback<_rebound_v1_HeartbeatResponse__Output>): grpc.ClientUnaryCall;
  
  RegisterTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  RegisterTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  RegisterTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  RegisterTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  registerTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  registerTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  registerTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  registerTaskManager(argument: _rebound_v1_RegisterTaskManagerRequest, callback: grpc.requestCallback<_rebound_v1_RegisterTaskManagerResponse__Output>): grpc.ClientUnaryCall;
  
  RequestSplit(argument: _rebound_v1_SplitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  RequestSplit(argument: _rebound_v1_SplitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  RequestSplit(argument: _rebound_v1_SplitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  RequestSplit(argument: _rebound_v1_SplitRequest, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  requestSplit(argument: _rebound_v1_SplitRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  requestSplit(argument: _rebound_v1_SplitRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  requestSplit(argument: _rebound_v1_SplitRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  requestSplit(argument: _rebound_v1_SplitRequest, callback: grpc.requestCallback<_rebound_v1_SplitResponse__Output>): grpc.ClientUnaryCall;
  
  SendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  SendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  SendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  SendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  sendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  sendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  sendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  sendCoordinationRequest(argument: _rebound_v1_CoordinationRequest, callback: grpc.requestCallback<_rebound_v1_CoordinationResponse__Output>): grpc.ClientUnaryCall;
  
  UpdateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  UpdateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  UpdateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  UpdateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  updateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  updateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  updateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  updateTaskExecutionState(argument: _rebound_v1_TaskExecutionState, callback: grpc.requestCallback<_rebound_v1_Ack__Output>): grpc.ClientUnaryCall;
  
}

export interface JobMasterGatewayHandlers extends grpc.UntypedServiceImplementation {
  FetchJobArtifact: grpc.handleUnaryCall<_rebound_v1_FetchJobArtifactRequest__Output, _rebound_v1_JobArtifact>;
  
  Heartbeat: grpc.handleUnaryCall<_rebound_v1_TaskManagerHeartbeat__Output, _rebound_v1_HeartbeatResponse>;
  
  RegisterTaskManager: grpc.handleUnaryCall<_rebound_v1_RegisterTaskManagerRequest__Output, _rebound_v1_RegisterTaskManagerResponse>;
  
  RequestSplit: grpc.handleUnaryCall<_rebound_v1_SplitRequest__Output, _rebound_v1_SplitResponse>;
  
  SendCoordinationRequest: grpc.handleUnaryCall<_rebound_v1_CoordinationRequest__Output, _rebound_v1_CoordinationResponse>;
  
  UpdateTaskExecutionState: grpc.handleUnaryCall<_rebound_v1_TaskExecutionState__Output, _rebound_v1_Ack>;
  
}

export interface JobMasterGatewayDefinition extends grpc.ServiceDefinition {
  FetchJobArtifact: MethodDefinition<_rebound_v1_FetchJobArtifactRequest, _rebound_v1_JobArtifact, _rebound_v1_FetchJobArtifactRequest__Output, _rebound_v1_JobArtifact__Output>
  Heartbeat: MethodDefinition<_rebound_v1_TaskManagerHeartbeat, _rebound_v1_HeartbeatResponse, _rebound_v1_TaskManagerHeartbeat__Output, _rebound_v1_HeartbeatResponse__Output>
  RegisterTaskManager: MethodDefinition<_rebound_v1_RegisterTaskManagerRequest, _rebound_v1_RegisterTaskManagerResponse, _rebound_v1_RegisterTaskManagerRequest__Output, _rebound_v1_RegisterTaskManagerResponse__Output>
  RequestSplit: MethodDefinition<_rebound_v1_SplitRequest, _rebound_v1_SplitResponse, _rebound_v1_SplitRequest__Output, _rebound_v1_SplitResponse__Output>
  SendCoordinationRequest: MethodDefinition<_rebound_v1_CoordinationRequest, _rebound_v1_CoordinationResponse, _rebound_v1_CoordinationRequest__Output, _rebound_v1_CoordinationResponse__Output>
  UpdateTaskExecutionState: MethodDefinition<_rebound_v1_TaskExecutionState, _rebound_v1_Ack, _rebound_v1_TaskExecutionState__Output, _rebound_v1_Ack__Output>
}
