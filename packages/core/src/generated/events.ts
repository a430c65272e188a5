// @ts-nocheck
import type * as grpc from '@grpc/grpc-js';
import type { MessageTypeDefinition } from '@grpc/proto-loader';

import type { Empty as _rebound_v1_Empty, Empty__Output as _rebound_v1_Empty__Output } from './rebound/v1/Empty.js';
import type { ExecutionAttemptId as _rebound_v1_ExecutionAttemptId, ExecutionAttemptId__Output as _rebound_v1_ExecutionAttemptId__Output } from './rebound/v1/ExecutionAttemptId.js';
import type { ExecutionJobVertexInitializedEvent as _rebound_v1_ExecutionJobVertexInitializedEvent, ExecutionJobVertexInitializedEvent__Output as _rebound_v1_ExecutionJobVertexInitializedEvent__Output } from './rebound/v1/ExecutionJobVertexInitializedEvent.js';
import type { ExecutionVertexFinishedEvent as _rebound_v1_ExecutionVertexFinishedEvent, ExecutionVertexFinishedEvent__Output as _rebound_v1_ExecutionVertexFinishedEvent__Output } from './rebound/v1/ExecutionVertexFinishedEvent.js';
import type { ExecutionVertexId as _rebound_v1_ExecutionVertexId, ExecutionVertexId__Output as _rebound_v1_ExecutionVertexId__Output } from './rebound/v1/ExecutionVertexId.js';
import type { ExecutionVertexResetEvent as _rebound_v1_ExecutionVertexResetEvent, ExecutionVertexResetEvent__Output as _rebound_v1_ExecutionVertexResetEvent__Output } from './rebound/v1/ExecutionVertexResetEvent.js';
import type { IOMetrics as _rebound_v1_IOMetrics, IOMetrics__Output as _rebound_v1_IOMetrics__Output } from './rebound/v1/IOMetrics.js';
import type { JobEventFileHeader as _rebound_v1_JobEventFileHeader, JobEventFileHeader__Output as _rebound_v1_JobEventFileHeader__Output } from './rebound/v1/JobEventFileHeader.js';
import type { JobVertexInputInfo as _rebound_v1_JobVertexInputInfo, JobVertexInputInfo__Output as _rebound_v1_JobVertexInputInfo__Output } from './rebound/v1/JobVertexInputInfo.js';
import type { OperatorCoordinatorSnapshot as _rebound_v1_OperatorCoordinatorSnapshot, OperatorCoordinatorSnapshot__Output as _rebound_v1_OperatorCoordinatorSnapshot__Output } from './rebound/v1/OperatorCoordinatorSnapshot.js';
import type { ResultPartitionId as _rebound_v1_ResultPartitionId, ResultPartitionId__Output as _rebound_v1_ResultPartitionId__Output } from './rebound/v1/ResultPartitionId.js';
import type { SealedEventFile as _rebound_v1_SealedEventFile, SealedEventFile__Output as _rebound_v1_SealedEventFile__Output } from './rebound/v1/SealedEventFile.js';
import type { ShuffleWorkerLocation as _rebound_v1_ShuffleWorkerLocation, ShuffleWorkerLocation__Output as _rebound_v1_ShuffleWorkerLocation__Output } from './rebound/v1/ShuffleWorkerLocation.js';
import type { SubpartitionRange as _rebound_v1_SubpartitionRange, SubpartitionRange__Output as _rebound_v1_SubpartitionRange__Output } from './rebound/v1/SubpartitionRange.js';
import type { TaskManagerLocation as _rebound_v1_TaskManagerLocation, TaskManagerLocation__Output as _rebound_v1_TaskManagerLocation__Output } from './rebound/v1/TaskManagerLocation.js';

type SubtypeConstructor<Constructor extends new (...args: any) => any, Subtype> = {
  new(...args: ConstructorParameters<Constructor>): Subtype;
};

export interface ProtoGrpcType {
  rebound: {
    v1: {
      Empty: MessageTypeDefinition<_rebound_v1_Empty, _rebound_v1_Empty__Output>
      ExecutionAttemptId: MessageTypeDefinition<_rebound_v1_ExecutionAttemptId, _rebound_v1_ExecutionAttemptId__Output>
      ExecutionJobVertexInitializedEvent: MessageTypeDefinition<_rebound_v1_ExecutionJobVertexInitializedEvent, _rebound_v1_ExecutionJobVertexInitializedEvent__Output>
      ExecutionVertexFinishedEvent: MessageTypeDefinition<_rebound_v1_ExecutionVertexFinishedEvent, _rebound_v1_ExecutionVertexFinishedEvent__Output>
      ExecutionVertexId: MessageTypeDefinition<_rebound_v1_ExecutionVertexId, _rebound_v1_ExecutionVertexId__Output>
      ExecutionVertexResetEvent: MessageTypeDefinition<_rebound_v1_ExecutionVertexResetEvent, _rebound_v1_ExecutionVertexResetEvent__Output>
      IOMetrics: MessageTypeDefinition<_rebound_v1_IOMetrics, _rebound_v1_IOMetrics__Output>
      JobEventFileHeader: MessageTypeDefinition<_rebound_v1_JobEventFileHeader, _rebound_v1_JobEventFileHeader__Output>
      JobVertexInputInfo: MessageTypeDefinition<_rebound_v1_JobVertexInputInfo, _rebound_v1_JobVertexInputInfo__Output>
      OperatorCoordinatorSnapshot: MessageTypeDefinition<_rebound_v1_OperatorCoordinatorSnapshot, _rebound_v1_OperatorCoordinatorSnapshot__Output>
      ResultPartitionId: MessageTypeDefinition<_rebound_v1_ResultPartitionId, _rebound_v1_ResultPartitionId__Output>
      SealedEventFile: MessageTypeDefinition<_rebound_v1_SealedEventFile, _rebound_v1_SealedEventFile__Output>
      ShuffleWorkerLocation: MessageTypeDefinition<_rebound_v1_ShuffleWorkerLocation, _rebound_v1_ShuffleWorkerLocation__Output>
      SubpartitionRange: MessageTypeDefinition<_rebound_v1_SubpartitionRange, _rebound_v1_SubpartitionRange__Output>
      TaskManagerLocation: MessageTypeDefinition<_rebound_v1_TaskManagerLocation, _rebound_v1_TaskManagerLocation__Output>
    }
  }
}
