// Original file: proto/rebound/v1/partition.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { PartitionChunk as _rebound_v1_PartitionChunk, PartitionChunk__Output as _rebound_v1_PartitionChunk__Output } from '../../rebound/v1/PartitionChunk.js';
import type { ReadSubpartitionsRequest as _rebound_v1_ReadSubpartitionsRequest, ReadSubpartitionsRequest__Output as _rebound_v1_ReadSubpartitionsRequest__Output } from '../../rebound/v1/ReadSubpartitionsRequest.js';

export interface PartitionServiceClient extends grpc.Client {
  ReadSubpartitions(argument: _rebound_v1_ReadSubpartitionsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_PartitionChunk__Output>;
  ReadSubpartitions(argument: _rebound_v1_ReadSubpartitionsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_PartitionChunk__Output>;
  readSubpartitions(argument: _rebound_v1_ReadSubpartitionsRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_PartitionChunk__Output>;
  readSubpartitions(argument: _rebound_v1_ReadSubpartitionsRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_PartitionChunk__Output>;
  
}

export interface PartitionServiceHandlers extends grpc.UntypedServiceImplementation {
  ReadSubpartitions: grpc.handleServerStreamingCall<_rebound_v1_ReadSubpartitionsRequest__Output, _rebound_v1_PartitionChunk>;
  
}

export interface PartitionServiceDefinition extends grpc.ServiceDefinition {
  ReadSubpartitions: MethodDefinition<_rebound_v1_ReadSubpartitionsRequest, _rebound_v1_PartitionChunk, _rebound_v1_ReadSubpartitionsRequest__Output, _rebound_v1_PartitionChunk__Output>
}
