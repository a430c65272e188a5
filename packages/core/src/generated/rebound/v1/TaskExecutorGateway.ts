// Original file: proto/rebound/v1/taskexecutor.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CancelTaskRequest as _rebound_v1_CancelTaskRequest, CancelTaskRequest__Output as _rebound_v1_CancelTaskRequest__Output } from '../../rebound/v1/CancelTaskRequest.js';
import type { CancelTaskResponse as _rebound_v1_CancelTaskResponse, CancelTaskResponse__Output as _rebound_v1_CancelTaskResponse__Output } from '../../rebound/v1/CancelTaskResponse.js';
import type { DeployTaskResponse as _rebound_v1_DeployTaskResponse, DeployTaskResponse__Output as _rebound_v1_DeployTaskResponse__Output } from '../../rebound/v1/DeployTaskResponse.js';
import type { DisconnectJobRequest as _rebound_v1_DisconnectJobRequest, DisconnectJobRequest__Output as _rebound_v1_DisconnectJobRequest__Output } from '../../rebound/v1/DisconnectJobRequest.js';
import type { DisconnectJobResponse as _rebound_v1_DisconnectJobResponse, DisconnectJobResponse__Output as _rebound_v1_DisconnectJobResponse__Output } from '../../rebound/v1/DisconnectJobResponse.js';
import type { GetPartitionsRequest as _rebound_v1_GetPartitionsRequest, GetPartitionsRequest__Output as _rebound_v1_GetPartitionsRequest__Output } from '../../rebound/v1/GetPartitionsRequest.js';
import type { GetPartitionsResponse as _rebound_v1_GetPartitionsResponse, GetPartitionsResponse__Output as _rebound_v1_GetPartitionsResponse__Output } from '../../rebound/v1/GetPartitionsResponse.js';
import type { JobManagerHeartbeat as _rebound_v1_JobManagerHeartbeat, JobManagerHeartbeat__Output as _rebound_v1_JobManagerHeartbeat__Output } from '../../rebound/v1/JobManagerHeartbeat.js';
import type { JobManagerHeartbeatResponse as _rebound_v1_JobManagerHeartbeatResponse, JobManagerHeartbeatResponse__Output as _rebound_v1_JobManagerHeartbeatResponse__Output } from '../../rebound/v1/JobManagerHeartbeatResponse.js';
import type { ReleasePartitionsRequest as _rebound_v1_ReleasePartitionsRequest, ReleasePartitionsRequest__Output as _rebound_v1_ReleasePartitionsRequest__Output } from '../../rebound/v1/ReleasePartitionsRequest.js';
import type { ReleasePartitionsResponse as _rebound_v1_ReleasePartitionsResponse, ReleasePartitionsResponse__Output as _rebound_v1_ReleasePartitionsResponse__Output } from '../../rebound/v1/ReleasePartitionsResponse.js';
import type { TaskDeploymentDescriptor as _rebound_v1_TaskDeploymentDescriptor, TaskDeploymentDescriptor__Output as _rebound_v1_TaskDeploymentDescriptor__Output } from '../../rebound/v1/TaskDeploymentDescriptor.js';

export interface TaskExecutorGatewayClient extends grpc.Client {
  CancelTask(argument: _rebound_v1_CancelTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  CancelTask(argument: _rebound_v1_CancelTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  CancelTask(argument: _rebound_v1_CancelTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  CancelTask(argument: _rebound_v1_CancelTaskRequest, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  cancelTask(argument: _rebound_v1_CancelTaskRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  cancelTask(argument: _rebound_v1_CancelTaskRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  cancelTask(argument: _rebound_v1_CancelTaskRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  cancelTask(argument: _rebound_v1_CancelTaskRequest, callback: grpc.requestCallback<_rebound_v1_CancelTaskResponse__Output>): grpc.ClientUnaryCall;
  
  DeployTask(argument: _rebound_v1_TaskDeploymentDescriptor, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  DeployTask(argument: _rebound_v1_TaskDeploymentDescriptor, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  DeployTask(argument: _rebound_v1_TaskDeploymentDescriptor, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  DeployTask(argument: _rebound_v1_TaskDeploymentDescriptor, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  deployTask(argument: _rebound_v1_TaskDeploymentDescriptor, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  deployTask(argument: _rebound_v1_TaskDeploymentDescriptor, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  deployTask(argument: _rebound_v1_TaskDeploymentDescriptor, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  deployTask(argument: _rebound_v1_TaskDeploymentDescriptor, callback: grpc.requestCallback<_rebound_v1_DeployTaskResponse__Output>): grpc.ClientUnaryCall;
  
  DisconnectJob(argument: _rebound_v1_DisconnectJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  DisconnectJob(argument: _rebound_v1_DisconnectJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  DisconnectJob(argument: _rebound_v1_DisconnectJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  DisconnectJob(argument: _rebound_v1_DisconnectJobRequest, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  disconnectJob(argument: _rebound_v1_DisconnectJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  disconnectJob(argument: _rebound_v1_DisconnectJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  disconnectJob(argument: _rebound_v1_DisconnectJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  disconnectJob(argument: _rebound_v1_DisconnectJobRequest, callback: grpc.requestCallback<_rebound_v1_DisconnectJobResponse__Output>): grpc.ClientUnaryCall;
  
  GetAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  GetAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  GetAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  GetAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  getAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  getAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  getAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  getAndRetainPartitionsWithMetrics(argument: _rebound_v1_GetPartitionsRequest, callback: grpc.requestCallback<_rebound_v1_GetPartitionsResponse__Output>): grpc.ClientUnaryCall;
  
  HeartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  HeartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  HeartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  HeartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  heartbeatFromJobManager(argument: _rebound_v1_JobManagerHeartbeat, callback: grpc.requestCallback<_rebound_v1_JobManagerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  
  ReleasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleasePartitionsRequest, callback: grpc.requestCallback<_rebound_v1_ReleasePartitionsResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface TaskExecutorGatewayHandlers extends grpc.UntypedServiceImplementation {
  CancelTask: grpc.handleUnaryCall<_rebound_v1_CancelTaskRequest__Output, _rebound_v1_CancelTaskResponse>;
  
  DeployTask: grpc.handleUnaryCall<_rebound_v1_TaskDeploymentDescriptor__Output, _rebound_v1_DeployTaskResponse>;
  
  DisconnectJob: grpc.handleUnaryCall<_rebound_v1_DisconnectJobRequest__Output, _rebound_v1_DisconnectJobResponse>;
  
  GetAndRetainPartitionsWithMetrics: grpc.handleUnaryCall<_rebound_v1_GetPartitionsRequest__Output, _rebound_v1_GetPartitionsResponse>;
  
  HeartbeatFromJobManager: grpc.handleUnaryCall<_rebound_v1_JobManagerHeartbeat__Output, _rebound_v1_JobManagerHeartbeatResponse>;
  
  ReleasePartitions: grpc.handleUnaryCall<_rebound_v1_ReleasePartitionsRequest__Output, _rebound_v1_ReleasePartitionsResponse>;
  
}

export interface TaskExecutorGatewayDefinition extends grpc.ServiceDefinition {
  CancelTask: MethodDefinition<_rebound_v1_CancelTaskRequest, _rebound_v1_CancelTaskResponse, _rebound_v1_CancelTaskRequest__Output, _rebound_v1_CancelTaskResponse__Output>
  DeployTask: MethodDefinition<_rebound_v1_TaskDeploymentDescriptor, _rebound_v1_DeployTaskResponse, _rebound_v1_TaskDeploymentDescriptor__Output, _rebound_v1_DeployTaskResponse__Output>
  DisconnectJob: MethodDefinition<_rebound_v1_DisconnectJobRequest, _rebound_v1_DisconnectJobResponse, _rebound_v1_DisconnectJobRequest__Output, _rebound_v1_DisconnectJobResponse__Output>
  GetAndRetainPartitionsWithMetrics: MethodDefinition<_rebound_v1_GetPartitionsRequest, _rebound_v1_GetPartitionsResponse, _rebound_v1_GetPartitionsRequest__Output, _rebound_v1_GetPartitionsResponse__Output>
  HeartbeatFromJobManager: MethodDefinition<_rebound_v1_JobManagerHeartbeat, _rebound_v1_JobManagerHeartbeatResponse, _rebound_v1_JobManagerHeartbeat__Output, _rebound_v1_JobManagerHeartbeatResponse__Output>
  ReleasePartitions: MethodDefinition<_rebound_v1_ReleasePartitionsRequest, _rebound_v1_ReleasePartitionsResponse, _rebound_v1_ReleasePartitionsRequest__Output, _rebound_v1_ReleasePartitionsResponse__Output>
}
