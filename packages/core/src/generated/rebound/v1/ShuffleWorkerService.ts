// Original file: proto/rebound/v1/shuffle.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { ListShufflePartitionsRequest as _rebound_v1_ListShufflePartitionsRequest, ListShufflePartitionsRequest__Output as _rebound_v1_ListShufflePartitionsRequest__Output } from '../../rebound/v1/ListShufflePartitionsRequest.js';
import type { ListShufflePartitionsResponse as _rebound_v1_ListShufflePartitionsResponse, ListShufflePartitionsResponse__Output as _rebound_v1_ListShufflePartitionsResponse__Output } from '../../rebound/v1/ListShufflePartitionsResponse.js';
import type { PartitionWriteAck as _rebound_v1_PartitionWriteAck, PartitionWriteAck__Output as _rebound_v1_PartitionWriteAck__Output } from '../../rebound/v1/PartitionWriteAck.js';
import type { PartitionWriteMessage as _rebound_v1_PartitionWriteMessage, PartitionWriteMessage__Output as _rebound_v1_PartitionWriteMessage__Output } from '../../rebound/v1/PartitionWriteMessage.js';
import type { ReleaseShuffleJobRequest as _rebound_v1_ReleaseShuffleJobRequest, ReleaseShuffleJobRequest__Output as _rebound_v1_ReleaseShuffleJobRequest__Output } from '../../rebound/v1/ReleaseShuffleJobRequest.js';
import type { ReleaseShufflePartitionsRequest as _rebound_v1_ReleaseShufflePartitionsRequest, ReleaseShufflePartitionsRequest__Output as _rebound_v1_ReleaseShufflePartitionsRequest__Output } from '../../rebound/v1/ReleaseShufflePartitionsRequest.js';
import type { ReleaseShufflePartitionsResponse as _rebound_v1_ReleaseShufflePartitionsResponse, ReleaseShufflePartitionsResponse__Output as _rebound_v1_ReleaseShufflePartitionsResponse__Output } from '../../rebound/v1/ReleaseShufflePartitionsResponse.js';

export interface ShuffleWorkerServiceClient extends grpc.Client {
  ListPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ListPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ListPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ListPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  listPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  listPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  listPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  listPartitions(argument: _rebound_v1_ListShufflePartitionsRequest, callback: grpc.requestCallback<_rebound_v1_ListShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  
  ReleaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releaseJob(argument: _rebound_v1_ReleaseShuffleJobRequest, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  
  ReleasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  ReleasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  releasePartitions(argument: _rebound_v1_ReleaseShufflePartitionsRequest, callback: grpc.requestCallback<_rebound_v1_ReleaseShufflePartitionsResponse__Output>): grpc.ClientUnaryCall;
  
  WritePartition(metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  WritePartition(metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  WritePartition(options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  WritePartition(callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  writePartition(metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  writePartition(metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  writePartition(options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  writePartition(callback: grpc.requestCallback<_rebound_v1_PartitionWriteAck__Output>): grpc.ClientWritableStream<_rebound_v1_PartitionWriteMessage>;
  
}

export interface ShuffleWorkerServiceHandlers extends grpc.UntypedServiceImplementation {
  ListPartitions: grpc.handleUnaryCall<_rebound_v1_ListShufflePartitionsRequest__Output, _rebound_v1_ListShufflePartitionsResponse>;
  
  ReleaseJob: grpc.handleUnaryCall<_rebound_v1_ReleaseShuffleJobRequest__Output, _rebound_v1_ReleaseShufflePartitionsResponse>;
  
  ReleasePartitions: grpc.handleUnaryCall<_rebound_v1_ReleaseShufflePartitionsRequest__Output, _rebound_v1_ReleaseShufflePartitionsResponse>;
  
  WritePartition: grpc.handleClientStreamingCall<_rebound_v1_PartitionWriteMessage__Output, _rebound_v1_PartitionWriteAck>;
  
}

export interface ShuffleWorkerServiceDefinition extends grpc.ServiceDefinition {
  ListPartitions: MethodDefinition<_rebound_v1_ListShufflePartitionsRequest, _rebound_v1_ListShufflePartitionsResponse, _rebound_v1_ListShufflePartitionsRequest__Output, _rebound_v1_ListShufflePartitionsResponse__Output>
  ReleaseJob: MethodDefinition<_rebound_v1_ReleaseShuffleJobRequest, _rebound_v1_ReleaseShufflePartitionsResponse, _rebound_v1_ReleaseShuffleJobRequest__Output, _rebound_v1_ReleaseShufflePartitionsResponse__Output>
  ReleasePartitions: MethodDefinition<_rebound_v1_ReleaseShufflePartitionsRequest, _rebound_v1_ReleaseShufflePartitionsResponse, _rebound_v1_ReleaseShufflePartitionsRequest__Output, _rebound_v1_ReleaseShufflePartitionsResponse__Output>
  WritePartition: MethodDefinition<_rebound_v1_PartitionWriteMessage, _rebound_v1_PartitionWriteAck, _rebound_v1_PartitionWriteMessage__Output, _rebound_v1_PartitionWriteAck__Output>
}
