import { attemptKey, errorMessage, partitionKey } from '@rebound/core';
import type { ExecutionAttemptId__Output, ResultPartitionId__Output } from '@rebound/core';
import { attemptIdOf } from './adaptive-batch-scheduler.js';
import type { ExecutionGraph, ExecutionVertex } from './execution-graph.js';
import type { FailoverContext } from './failover-context.js';

/**
 * Task failover: a failed task restarts alone (Flink's region of one task, all exchanges being
 * blocking), together with the producer of a partition it could not find; the restart strategy
 * bounds how often.
 */
export class Failover {
  constructor(private readonly ctx: FailoverContext) {}

  private get graph(): ExecutionGraph {
    return this.ctx.job.graph;
  }

  /**
   * A task attempt failed. Restart it (and, for a lost partition, its producer), bounded by the
   * restart strategy.
   */
  failExecution(id: ExecutionAttemptId__Output, reason: string, missingPartition?: ResultPartitionId__Output): void {
    const ev = this.ctx.job.currentAttempt(id);
    if (!ev || this.ctx.job.state !== 'RUNNING') return;
    if (ev.state !== 'DEPLOYING' && ev.state !== 'RUNNING' && ev.state !== 'SCHEDULED') return;
    this.ctx.exceptionHistory.record(
      [ev],
      missingPartition ? 'PartitionNotFound' : 'TaskFailure',
      reason,
      this.ctx.clock.now(),
    );
    if (ev.location) this.ctx.registry.freeSlot(ev.location.task_manager_id);
    this.graph.transition(ev, 'FAILED');
    this.ctx.logger.warn({ execution: attemptKey(id), reason }, 'task failed');
    const toReset: ExecutionVertex[] = [ev];
    if (missingPartition) {
      const producer = this.graph.executionVertex(missingPartition.vertex_id, missingPartition.subtask);
      const sameAttempt =
        producer !== undefined &&
        producer.attempt === missingPartition.attempt &&
        producer.attemptEpoch === missingPartition.epoch;
      if (sameAttempt && producer.state === 'FINISHED') {
        this.ctx.logger.warn(
          { partition: partitionKey({ ...missingPartition, job_id: this.ctx.job.jobId }) },
          'partition lost; its producer reruns',
        );
        toReset.push(producer);
      }
    }
    this.restartTasks(toReset, reason);
  }

  /** A TaskManager is gone: its running tasks failed, and finished partitions on it are lost. */
  /**
   * What ran on the TaskManager is failed over, and what finished there reruns if a consumer still
   * needs it, unless `partitionsKept`: the same process registered again and still holds them.
   */
  onTaskManagerLost(tmId: string, reason: string, partitionsKept = false): void {
    if (this.ctx.job.state !== 'RUNNING') return;
    const toReset: ExecutionVertex[] = [];
    for (const ev of this.graph.allExecutionVertices()) {
      if (ev.location?.task_manager_id !== tmId) continue;
      if (ev.state === 'DEPLOYING' || ev.state === 'RUNNING') {
        this.graph.transition(ev, 'FAILED');
        toReset.push(ev);
      } else if (!partitionsKept && ev.state === 'FINISHED' && ev.jobVertex.consumers.some((c) => !c.isFinished())) {
        toReset.push(ev);
      }
    }
    if (toReset.length === 0) return;
    this.ctx.exceptionHistory.record(
      toReset,
      'TaskManagerLost',
      `TaskManager ${tmId} lost: ${reason}`,
      this.ctx.clock.now(),
    );
    this.restartTasks(toReset, `TaskManager ${tmId} lost: ${reason}`);
  }

  /**
   * Finished partitions are gone with every holder that kept them (a shuffle worker died): their
   * producers rerun if a consumer still needs them. Consumers reading them fail on their own
   * (PARTITION_NOT_FOUND) and restart with the producer.
   */
  onPartitionsLost(partitions: readonly ResultPartitionId__Output[], reason: string): void {
    if (this.ctx.job.state !== 'RUNNING') return;
    const toReset: ExecutionVertex[] = [];
    for (const p of partitions) {
      const ev = this.graph.executionVertex(p.vertex_id, p.subtask);
      if (!ev || ev.state !== 'FINISHED' || ev.attempt !== p.attempt || ev.attemptEpoch !== p.epoch) continue;
      if (ev.jobVertex.consumers.some((c) => !c.isFinished())) toReset.push(ev);
    }
    if (toReset.length === 0) return;
    this.ctx.exceptionHistory.record(toReset, 'PartitionLost', reason, this.ctx.clock.now());
    this.ctx.logger.warn({ tasks: toReset.map((e) => e.key), reason }, 'partitions lost; their producers rerun');
    this.restartTasks(toReset, reason);
  }

  private restartTasks(failed: ExecutionVertex[], reason: string): void {
    const evs = this.ctx.coordinators.withWholeSources(failed);
    for (const ev of evs) {
      if (ev.state === 'RUNNING' || ev.state === 'DEPLOYING') this.cancelAttempt(ev);
    }
    if (!this.ctx.restartStrategy.canRestart()) {
      void this.ctx.job.failJob(
        `restart strategy exhausted after ${this.ctx.restartStrategy.maxRestarts} restarts; last failure: ${reason}`,
      );
      return;
    }
    this.ctx.restartStrategy.notifyRestart();
    const notBefore = this.ctx.clock.now() + this.ctx.restartStrategy.delayMs;
    this.ctx.coordinators.notifyOfReset(evs);
    this.graph.resetForNewExecutions(evs);
    this.ctx.coordinators.afterSourceResets(this.graph, evs);
    this.ctx.scheduler.delayRestart(evs, notBefore);
    this.ctx.logger.info(
      { tasks: evs.map((e) => e.key), restarts: this.ctx.restartStrategy.restarts },
      'restarting tasks',
    );
    this.ctx.onSlotsFreed();
    this.ctx.scheduler.schedule();
  }

  /** Cancels one running attempt (its result is no longer wanted). */
  private cancelAttempt(ev: ExecutionVertex): void {
    const tm = ev.location ? this.ctx.registry.get(ev.location.task_manager_id) : undefined;
    const id = attemptIdOf(ev);
    this.graph.transition(ev, 'CANCELED');
    if (!tm) return;
    this.ctx.registry.freeSlot(tm.id);
    this.ctx.gateway
      .cancelTask(tm, { epoch: this.ctx.epoch, execution: id, deploy_epoch: ev.attemptEpoch })
      .catch((err: unknown) => {
        this.ctx.logger.warn({ err: errorMessage(err), taskManagerId: tm.id }, 'cancel failed');
      });
  }

  /** Cancels every running attempt: the job failed or is canceled. */
  async cancelRunningTasks(): Promise<void> {
    const calls: Promise<unknown>[] = [];
    for (const ev of this.graph.allExecutionVertices()) {
      if ((ev.state === 'DEPLOYING' || ev.state === 'RUNNING') && ev.location) {
        const tm = this.ctx.registry.get(ev.location.task_manager_id);
        this.graph.transition(ev, 'CANCELED');
        if (!tm) continue;
        this.ctx.registry.freeSlot(tm.id);
        calls.push(
          this.ctx.gateway
            .cancelTask(tm, { epoch: this.ctx.epoch, execution: attemptIdOf(ev), deploy_epoch: ev.attemptEpoch })
            .catch((err: unknown) => {
              this.ctx.logger.warn({ err: errorMessage(err), taskManagerId: tm.id }, 'cancel failed');
            }),
        );
      }
    }
    await Promise.all(calls);
  }
}
