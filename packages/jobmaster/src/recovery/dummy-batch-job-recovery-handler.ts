import type { Logger } from '@rebound/core';
import type { TaskExecutorGateway } from '../task-executor-gateway.js';
import type { RegisteredTaskManager } from '../task-manager-registry.js';
import type { BatchJobRecoveryContext, BatchJobRecoveryHandler } from './batch-job-recovery-handler.js';
import { releaseRetainedOfLateTaskManager, type RetainedPartitionsScope } from './retained-partitions.js';

/**
 * Batch job recovery is off for this job (Flink's DummyBatchJobRecoveryHandler): nothing is
 * recorded and nothing replayed. Partitions a TaskManager still holds of the job are released.
 */
export class DummyBatchJobRecoveryHandler implements BatchJobRecoveryHandler {
  private running = false;
  private readonly scope: RetainedPartitionsScope;

  constructor(context: BatchJobRecoveryContext, epoch: number, gateway: TaskExecutorGateway, logger: Logger) {
    this.scope = {
      jobId: context.jobId,
      epoch,
      get graph() {
        return context.graph;
      },
      gateway,
      logger,
    };
  }

  async initialize(): Promise<boolean> {
    return false;
  }

  async startRecovering(): Promise<boolean> {
    return false;
  }

  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    if (this.running && retainedJobs.includes(this.scope.jobId)) releaseRetainedOfLateTaskManager(this.scope, tm);
  }

  onJobRunning(): void {
    this.running = true;
  }

  async stop(): Promise<void> {}
}
