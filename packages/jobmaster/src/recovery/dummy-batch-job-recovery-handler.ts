import type { RegisteredTaskManager } from '../task-manager-registry.js';
import type { BatchJobRecoveryHandler } from './batch-job-recovery-handler.js';
import { releaseRetainedOfLateTaskManager, type RetainedPartitionsScope } from './retained-partitions.js';

/**
 * Batch job recovery is off for this job (Flink's DummyBatchJobRecoveryHandler): nothing is
 * recorded and nothing replayed. Partitions a TaskManager still holds of the job are released.
 */
export class DummyBatchJobRecoveryHandler implements BatchJobRecoveryHandler {
  private running = false;

  constructor(private readonly scope: RetainedPartitionsScope) {}

  async initialize(): Promise<boolean> {
    return false;
  }

  async startRecovering(): Promise<boolean> {
    return false;
  }

  onPartitionsReported(): void {}

  onTaskManagerRegistered(tm: RegisteredTaskManager, retainedJobs: readonly string[]): void {
    if (this.running && retainedJobs.includes(this.scope.job.jobId)) releaseRetainedOfLateTaskManager(this.scope, tm);
  }

  onJobRunning(): void {
    this.running = true;
  }

  vertexDecisionsDurable(): undefined {
    return undefined;
  }

  async stop(): Promise<void> {}
}
