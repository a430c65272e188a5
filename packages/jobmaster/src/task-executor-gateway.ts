import type {
  CancelTaskRequest,
  CancelTaskResponse__Output,
  DeployTaskResponse__Output,
  DisconnectJobRequest,
  DisconnectJobResponse__Output,
  GetPartitionsRequest,
  GetPartitionsResponse__Output,
  ReleasePartitionsRequest,
  ReleasePartitionsResponse__Output,
  TaskDeploymentDescriptor,
} from '@rebound/core';
import type { RegisteredTaskManager, TaskManagerRegistry } from './task-manager-registry.js';

/**
 * The JobMaster's calls to a TaskManager (Flink's TaskExecutorGateway). The JobMaster and its
 * parts call TaskManagers only through this, so unit tests can stand in for them without gRPC.
 */
export interface TaskExecutorGateway {
  deployTask(tm: RegisteredTaskManager, tdd: TaskDeploymentDescriptor): Promise<DeployTaskResponse__Output>;
  cancelTask(tm: RegisteredTaskManager, req: CancelTaskRequest): Promise<CancelTaskResponse__Output>;
  releasePartitions(
    tm: RegisteredTaskManager,
    req: ReleasePartitionsRequest,
  ): Promise<ReleasePartitionsResponse__Output>;
  getAndRetainPartitionsWithMetrics(
    tm: RegisteredTaskManager,
    req: GetPartitionsRequest,
  ): Promise<GetPartitionsResponse__Output>;
  disconnectJob(tm: RegisteredTaskManager, req: DisconnectJobRequest): Promise<DisconnectJobResponse__Output>;
}

/**
 * The gateway of a running leader: gRPC through the registry's clients, with its deadline. Every
 * call carries the session the TaskManager registered with, which only the leaders it registered
 * with know: a token holder cannot release, cancel or deploy in the leader's name.
 */
export class RpcTaskExecutorGateway implements TaskExecutorGateway {
  constructor(private readonly registry: TaskManagerRegistry) {}

  deployTask(tm: RegisteredTaskManager, tdd: TaskDeploymentDescriptor): Promise<DeployTaskResponse__Output> {
    return this.registry.call(tm, (c) => c.DeployTask, { ...tdd, session_id: tm.session });
  }
  cancelTask(tm: RegisteredTaskManager, req: CancelTaskRequest): Promise<CancelTaskResponse__Output> {
    return this.registry.call(tm, (c) => c.CancelTask, { ...req, session_id: tm.session });
  }
  releasePartitions(
    tm: RegisteredTaskManager,
    req: ReleasePartitionsRequest,
  ): Promise<ReleasePartitionsResponse__Output> {
    return this.registry.call(tm, (c) => c.ReleasePartitions, { ...req, session_id: tm.session });
  }
  getAndRetainPartitionsWithMetrics(
    tm: RegisteredTaskManager,
    req: GetPartitionsRequest,
  ): Promise<GetPartitionsResponse__Output> {
    return this.registry.call(tm, (c) => c.GetAndRetainPartitionsWithMetrics, { ...req, session_id: tm.session });
  }
  disconnectJob(tm: RegisteredTaskManager, req: DisconnectJobRequest): Promise<DisconnectJobResponse__Output> {
    return this.registry.call(tm, (c) => c.DisconnectJob, { ...req, session_id: tm.session });
  }
}
