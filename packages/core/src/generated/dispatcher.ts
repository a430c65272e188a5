// @ts-nocheck
import type * as grpc from '@grpc/grpc-js';
import type { EnumTypeDefinition, MessageTypeDefinition } from '@grpc/proto-loader';

import type { CancelJobRequest as _rebound_v1_CancelJobRequest, CancelJobRequest__Output as _rebound_v1_CancelJobRequest__Output } from './rebound/v1/CancelJobRequest.js';
import type { CancelJobResponse as _rebound_v1_CancelJobResponse, CancelJobResponse__Output as _rebound_v1_CancelJobResponse__Output } from './rebound/v1/CancelJobResponse.js';
import type { ClusterOverview as _rebound_v1_ClusterOverview, ClusterOverview__Output as _rebound_v1_ClusterOverview__Output } from './rebound/v1/ClusterOverview.js';
import type { ClusterOverviewRequest as _rebound_v1_ClusterOverviewRequest, ClusterOverviewRequest__Output as _rebound_v1_ClusterOverviewRequest__Output } from './rebound/v1/ClusterOverviewRequest.js';
import type { DispatcherClient as _rebound_v1_DispatcherClient, DispatcherDefinition as _rebound_v1_DispatcherDefinition } from './rebound/v1/Dispatcher.js';
import type { FetchJobResultRequest as _rebound_v1_FetchJobResultRequest, FetchJobResultRequest__Output as _rebound_v1_FetchJobResultRequest__Output } from './rebound/v1/FetchJobResultRequest.js';
import type { GetJobStatusRequest as _rebound_v1_GetJobStatusRequest, GetJobStatusRequest__Output as _rebound_v1_GetJobStatusRequest__Output } from './rebound/v1/GetJobStatusRequest.js';
import type { JobEdge as _rebound_v1_JobEdge, JobEdge__Output as _rebound_v1_JobEdge__Output } from './rebound/v1/JobEdge.js';
import type { JobGraph as _rebound_v1_JobGraph, JobGraph__Output as _rebound_v1_JobGraph__Output } from './rebound/v1/JobGraph.js';
import type { JobResultChunk as _rebound_v1_JobResultChunk, JobResultChunk__Output as _rebound_v1_JobResultChunk__Output } from './rebound/v1/JobResultChunk.js';
import type { JobStatus as _rebound_v1_JobStatus, JobStatus__Output as _rebound_v1_JobStatus__Output } from './rebound/v1/JobStatus.js';
import type { JobSummary as _rebound_v1_JobSummary, JobSummary__Output as _rebound_v1_JobSummary__Output } from './rebound/v1/JobSummary.js';
import type { JobVertex as _rebound_v1_JobVertex, JobVertex__Output as _rebound_v1_JobVertex__Output } from './rebound/v1/JobVertex.js';
import type { ListJobsRequest as _rebound_v1_ListJobsRequest, ListJobsRequest__Output as _rebound_v1_ListJobsRequest__Output } from './rebound/v1/ListJobsRequest.js';
import type { ListJobsResponse as _rebound_v1_ListJobsResponse, ListJobsResponse__Output as _rebound_v1_ListJobsResponse__Output } from './rebound/v1/ListJobsResponse.js';
import type { RecoveryReport as _rebound_v1_RecoveryReport, RecoveryReport__Output as _rebound_v1_RecoveryReport__Output } from './rebound/v1/RecoveryReport.js';
import type { SinkDescriptor as _rebound_v1_SinkDescriptor, SinkDescriptor__Output as _rebound_v1_SinkDescriptor__Output } from './rebound/v1/SinkDescriptor.js';
import type { SubmitJobRequest as _rebound_v1_SubmitJobRequest, SubmitJobRequest__Output as _rebound_v1_SubmitJobRequest__Output } from './rebound/v1/SubmitJobRequest.js';
import type { SubmitJobResponse as _rebound_v1_SubmitJobResponse, SubmitJobResponse__Output as _rebound_v1_SubmitJobResponse__Output } from './rebound/v1/SubmitJobResponse.js';
import type { TaskCounts as _rebound_v1_TaskCounts, TaskCounts__Output as _rebound_v1_TaskCounts__Output } from './rebound/v1/TaskCounts.js';
import type { TaskManagerInfo as _rebound_v1_TaskManagerInfo, TaskManagerInfo__Output as _rebound_v1_TaskManagerInfo__Output } from './rebound/v1/TaskManagerInfo.js';
import type { VertexStatus as _rebound_v1_VertexStatus, VertexStatus__Output as _rebound_v1_VertexStatus__Output } from './rebound/v1/VertexStatus.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  rebound: {
    v1: {
      CancelJobRequest: MessageTypeDefinition<_rebound_v1_CancelJobRequest, _rebound_v1_CancelJobRequest__Output>
      CancelJobResponse: MessageTypeDefinition<_rebound_v1_CancelJobResponse, _rebound_v1_CancelJobResponse__Output>
      ClusterOverview: MessageTypeDefinition<_rebound_v1_ClusterOverview, _rebound_v1_ClusterOverview__Output>
      ClusterOverviewRequest: MessageTypeDefinition<_rebound_v1_ClusterOverviewRequest, _rebound_v1_ClusterOverviewRequest__Output>
      Dispatcher: SubtypeConstructor<typeof grpc.Client, _rebound_v1_DispatcherClient> & { service: _rebound_v1_DispatcherDefinition }
      DistributionPattern: EnumTypeDefinition
      FetchJobResultRequest: MessageTypeDefinition<_rebound_v1_FetchJobResultRequest, _rebound_v1_FetchJobResultRequest__Output>
      GetJobStatusRequest: MessageTypeDefinition<_rebound_v1_GetJobStatusRequest, _rebound_v1_GetJobStatusRequest__Output>
      JobEdge: MessageTypeDefinition<_rebound_v1_JobEdge, _rebound_v1_JobEdge__Output>
      JobGraph: MessageTypeDefinition<_rebound_v1_JobGraph, _rebound_v1_JobGraph__Output>
      JobResultChunk: MessageTypeDefinition<_rebound_v1_JobResultChunk, _rebound_v1_JobResultChunk__Output>
      JobStatus: MessageTypeDefinition<_rebound_v1_JobStatus, _rebound_v1_JobStatus__Output>
      JobSummary: MessageTypeDefinition<_rebound_v1_JobSummary, _rebound_v1_JobSummary__Output>
      JobVertex: MessageTypeDefinition<_rebound_v1_JobVertex, _rebound_v1_JobVertex__Output>
      ListJobsRequest: MessageTypeDefinition<_rebound_v1_ListJobsRequest, _rebound_v1_ListJobsRequest__Output>
      ListJobsResponse: MessageTypeDefinition<_rebound_v1_ListJobsResponse, _rebound_v1_ListJobsResponse__Output>
      RecoveryReport: MessageTypeDefinition<_rebound_v1_RecoveryReport, _rebound_v1_RecoveryReport__Output>
      SinkDescriptor: MessageTypeDefinition<_rebound_v1_SinkDescriptor, _rebound_v1_SinkDescriptor__Output>
      SubmitJobRequest: MessageTypeDefinition<_rebound_v1_SubmitJobRequest, _rebound_v1_SubmitJobRequest__Output>
      SubmitJobResponse: MessageTypeDefinition<_rebound_v1_SubmitJobResponse, _rebound_v1_SubmitJobResponse__Output>
      TaskCounts: MessageTypeDefinition<_rebound_v1_TaskCounts, _rebound_v1_TaskCounts__Output>
      TaskManagerInfo: MessageTypeDefinition<_rebound_v1_TaskManagerInfo, _rebound_v1_TaskManagerInfo__Output>
      VertexStatus: MessageTypeDefinition<_rebound_v1_VertexStatus, _rebound_v1_VertexStatus__Output>
    }
  }
}
