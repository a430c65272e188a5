// Original file: proto/rebound/v1/shuffle.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { RegisterShuffleWorkerRequest as _rebound_v1_RegisterShuffleWorkerRequest, RegisterShuffleWorkerRequest__Output as _rebound_v1_RegisterShuffleWorkerRequest__Output } from '../../rebound/v1/RegisterShuffleWorkerRequest.js';
import type { RegisterShuffleWorkerResponse as _rebound_v1_RegisterShuffleWorkerResponse, RegisterShuffleWorkerResponse__Output as _rebound_v1_RegisterShuffleWorkerResponse__Output } from '../../rebound/v1/RegisterShuffleWorkerResponse.js';
import type { ShuffleWorkerHeartbeatRequest as _rebound_v1_ShuffleWorkerHeartbeatRequest, ShuffleWorkerHeartbeatRequest__Output as _rebound_v1_ShuffleWorkerHeartbeatRequest__Output } from '../../rebound/v1/ShuffleWorkerHeartbeatRequest.js';
import type { ShuffleWorkerHeartbeatResponse as _rebound_v1_ShuffleWorkerHeartbeatResponse, ShuffleWorkerHeartbeatResponse__Output as _rebound_v1_ShuffleWorkerHeartbeatResponse__Output } from '../../rebound/v1/ShuffleWorkerHeartbeatResponse.js';

export interface ShuffleMasterGatewayClient extends grpc.Client {
  RegisterShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  RegisterShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  RegisterShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  RegisterShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  registerShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  registerShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  registerShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  registerShuffleWorker(argument: _rebound_v1_RegisterShuffleWorkerRequest, callback: grpc.requestCallback<_rebound_v1_RegisterShuffleWorkerResponse__Output>): grpc.ClientUnaryCall;
  
  ShuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  ShuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  ShuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  ShuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  shuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  shuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  shuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  shuffleWorkerHeartbeat(argument: _rebound_v1_ShuffleWorkerHeartbeatRequest, callback: grpc.requestCallback<_rebound_v1_ShuffleWorkerHeartbeatResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface ShuffleMasterGatewayHandlers extends grpc.UntypedServiceImplementation {
  RegisterShuffleWorker: grpc.handleUnaryCall<_rebound_v1_RegisterShuffleWorkerRequest__Output, _rebound_v1_RegisterShuffleWorkerResponse>;
  
  ShuffleWorkerHeartbeat: grpc.handleUnaryCall<_rebound_v1_ShuffleWorkerHeartbeatRequest__Output, _rebound_v1_ShuffleWorkerHeartbeatResponse>;
  
}

export interface ShuffleMasterGatewayDefinition extends grpc.ServiceDefinition {
  RegisterShuffleWorker: MethodDefinition<_rebound_v1_RegisterShuffleWorkerRequest, _rebound_v1_RegisterShuffleWorkerResponse, _rebound_v1_RegisterShuffleWorkerRequest__Output, _rebound_v1_RegisterShuffleWorkerResponse__Output>
  ShuffleWorkerHeartbeat: MethodDefinition<_rebound_v1_ShuffleWorkerHeartbeatRequest, _rebound_v1_ShuffleWorkerHeartbeatResponse, _rebound_v1_ShuffleWorkerHeartbeatRequest__Output, _rebound_v1_ShuffleWorkerHeartbeatResponse__Output>
}
