// Original file: proto/rebound/v1/dispatcher.proto

import type * as grpc from '@grpc/grpc-js'
import type { MethodDefinition } from '@grpc/proto-loader'
import type { CancelJobRequest as _rebound_v1_CancelJobRequest, CancelJobRequest__Output as _rebound_v1_CancelJobRequest__Output } from '../../rebound/v1/CancelJobRequest.js';
import type { CancelJobResponse as _rebound_v1_CancelJobResponse, CancelJobResponse__Output as _rebound_v1_CancelJobResponse__Output } from '../../rebound/v1/CancelJobResponse.js';
import type { ClusterOverview as _rebound_v1_ClusterOverview, ClusterOverview__Output as _rebound_v1_ClusterOverview__Output } from '../../rebound/v1/ClusterOverview.js';
import type { ClusterOverviewRequest as _rebound_v1_ClusterOverviewRequest, ClusterOverviewRequest__Output as _rebound_v1_ClusterOverviewRequest__Output } from '../../rebound/v1/ClusterOverviewRequest.js';
import type { FetchJobResultRequest as _rebound_v1_FetchJobResultRequest, FetchJobResultRequest__Output as _rebound_v1_FetchJobResultRequest__Output } from '../../rebound/v1/FetchJobResultRequest.js';
import type { GetJobStatusRequest as _rebound_v1_GetJobStatusRequest, GetJobStatusRequest__Output as _rebound_v1_GetJobStatusRequest__Output } from '../../rebound/v1/GetJobStatusRequest.js';
import type { JobResultChunk as _rebound_v1_JobResultChunk, JobResultChunk__Output as _rebound_v1_JobResultChunk__Output } from '../../rebound/v1/JobResultChunk.js';
import type { JobStatus as _rebound_v1_JobStatus, JobStatus__Output as _rebound_v1_JobStatus__Output } from '../../rebound/v1/JobStatus.js';
import type { ListJobsRequest as _rebound_v1_ListJobsRequest, ListJobsRequest__Output as _rebound_v1_ListJobsRequest__Output } from '../../rebound/v1/ListJobsRequest.js';
import type { ListJobsResponse as _rebound_v1_ListJobsResponse, ListJobsResponse__Output as _rebound_v1_ListJobsResponse__Output } from '../../rebound/v1/ListJobsResponse.js';
import type { SubmitJobRequest as _rebound_v1_SubmitJobRequest, SubmitJobRequest__Output as _rebound_v1_SubmitJobRequest__Output } from '../../rebound/v1/SubmitJobRequest.js';
import type { SubmitJobResponse as _rebound_v1_SubmitJobResponse, SubmitJobResponse__Output as _rebound_v1_SubmitJobResponse__Output } from '../../rebound/v1/SubmitJobResponse.js';

export interface DispatcherClient extends grpc.Client {
  CancelJob(argument: _rebound_v1_CancelJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _rebound_v1_CancelJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _rebound_v1_CancelJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  CancelJob(argument: _rebound_v1_CancelJobRequest, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _rebound_v1_CancelJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _rebound_v1_CancelJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _rebound_v1_CancelJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  cancelJob(argument: _rebound_v1_CancelJobRequest, callback: grpc.requestCallback<_rebound_v1_CancelJobResponse__Output>): grpc.ClientUnaryCall;
  
  FetchJobResult(argument: _rebound_v1_FetchJobResultRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_JobResultChunk__Output>;
  FetchJobResult(argument: _rebound_v1_FetchJobResultRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_JobResultChunk__Output>;
  fetchJobResult(argument: _rebound_v1_FetchJobResultRequest, metadata: grpc.Metadata, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_JobResultChunk__Output>;
  fetchJobResult(argument: _rebound_v1_FetchJobResultRequest, options?: grpc.CallOptions): grpc.ClientReadableStream<_rebound_v1_JobResultChunk__Output>;
  
  GetClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  GetClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  GetClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  GetClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  getClusterOverview(argument: _rebound_v1_ClusterOverviewRequest, callback: grpc.requestCallback<_rebound_v1_ClusterOverview__Output>): grpc.ClientUnaryCall;
  
  GetJobStatus(argument: _rebound_v1_GetJobStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  GetJobStatus(argument: _rebound_v1_GetJobStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  GetJobStatus(argument: _rebound_v1_GetJobStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  GetJobStatus(argument: _rebound_v1_GetJobStatusRequest, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  getJobStatus(argument: _rebound_v1_GetJobStatusRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  getJobStatus(argument: _rebound_v1_GetJobStatusRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  getJobStatus(argument: _rebound_v1_GetJobStatusRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  getJobStatus(argument: _rebound_v1_GetJobStatusRequest, callback: grpc.requestCallback<_rebound_v1_JobStatus__Output>): grpc.ClientUnaryCall;
  
  ListJobs(argument: _rebound_v1_ListJobsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  ListJobs(argument: _rebound_v1_ListJobsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  ListJobs(argument: _rebound_v1_ListJobsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  ListJobs(argument: _rebound_v1_ListJobsRequest, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _rebound_v1_ListJobsRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _rebound_v1_ListJobsRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _rebound_v1_ListJobsRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  listJobs(argument: _rebound_v1_ListJobsRequest, callback: grpc.requestCallback<_rebound_v1_ListJobsResponse__Output>): grpc.ClientUnaryCall;
  
  SubmitJob(argument: _rebound_v1_SubmitJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  SubmitJob(argument: _rebound_v1_SubmitJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  SubmitJob(argument: _rebound_v1_SubmitJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  SubmitJob(argument: _rebound_v1_SubmitJobRequest, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  submitJob(argument: _rebound_v1_SubmitJobRequest, metadata: grpc.Metadata, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  submitJob(argument: _rebound_v1_SubmitJobRequest, metadata: grpc.Metadata, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  submitJob(argument: _rebound_v1_SubmitJobRequest, options: grpc.CallOptions, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  submitJob(argument: _rebound_v1_SubmitJobRequest, callback: grpc.requestCallback<_rebound_v1_SubmitJobResponse__Output>): grpc.ClientUnaryCall;
  
}

export interface DispatcherHandlers extends grpc.UntypedServiceImplementation {
  CancelJob: grpc.handleUnaryCall<_rebound_v1_CancelJobRequest__Output, _rebound_v1_CancelJobResponse>;
  
  FetchJobResult: grpc.handleServerStreamingCall<_rebound_v1_FetchJobResultRequest__Output, _rebound_v1_JobResultChunk>;
  
  GetClusterOverview: grpc.handleUnaryCall<_rebound_v1_ClusterOverviewRequest__Output, _rebound_v1_ClusterOverview>;
  
  GetJobStatus: grpc.handleUnaryCall<_rebound_v1_GetJobStatusRequest__Output, _rebound_v1_JobStatus>;
  
  ListJobs: grpc.handleUnaryCall<_rebound_v1_ListJobsRequest__Output, _rebound_v1_ListJobsResponse>;
  
  SubmitJob: grpc.handleUnaryCall<_rebound_v1_SubmitJobRequest__Output, _rebound_v1_SubmitJobResponse>;
  
}

export interface DispatcherDefinition extends grpc.ServiceDefinition {
  CancelJob: MethodDefinition<_rebound_v1_CancelJobRequest, _rebound_v1_CancelJobResponse, _rebound_v1_CancelJobRequest__Output, _rebound_v1_CancelJobResponse__Output>
  FetchJobResult: MethodDefinition<_rebound_v1_FetchJobResultRequest, _rebound_v1_JobResultChunk, _rebound_v1_FetchJobResultRequest__Output, _rebound_v1_JobResultChunk__Output>
  GetClusterOverview: MethodDefinition<_rebound_v1_ClusterOverviewRequest, _rebound_v1_ClusterOverview, _rebound_v1_ClusterOverviewRequest__Output, _rebound_v1_ClusterOverview__Output>
  GetJobStatus: MethodDefinition<_rebound_v1_GetJobStatusRequest, _rebound_v1_JobStatus, _rebound_v1_GetJobStatusRequest__Output, _rebound_v1_JobStatus__Output>
  ListJobs: MethodDefinition<_rebound_v1_ListJobsRequest, _rebound_v1_ListJobsResponse, _rebound_v1_ListJobsRequest__Output, _rebound_v1_ListJobsResponse__Output>
  SubmitJob: MethodDefinition<_rebound_v1_SubmitJobRequest, _rebound_v1_SubmitJobResponse, _rebound_v1_SubmitJobRequest__Output, _rebound_v1_SubmitJobResponse__Output>
}
