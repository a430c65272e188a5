import { ErrorCode, ReboundError, TaskCanceledError, errorMessage, sleep } from '@rebound/core';
import type { Configuration, Logger } from '@rebound/core';
import type { HeldOutcomes } from './held-tasks.js';
import type { JobLeaderService } from './job-leader-service.js';
import type { ModuleCache } from './module-cache.js';
import { attemptKeyOf, taskLogOf, type RunningTask } from './running-task.js';
import type { ShuffleEnvironment } from './shuffle-environment.js';
import { InputPartitionNotFoundError, runTask } from './task.js';
import { unreachableShuffleWorkers } from '@rebound/partition';

/** What running a task attempt needs of its TaskExecutor. */
export interface TaskAttemptContext {
  readonly taskManagerId: string;
  /** The TaskManager's configuration (the job's own comes with the deployment). */
  readonly config: Configuration;
  readonly logger: Logger;
  readonly shuffle: ShuffleEnvironment;
  readonly modules: ModuleCache;
  /** Ended tasks of keep-running jobs, for the next leader's reconciliation. */
  readonly held: HeldOutcomes;
  jobLeader(): JobLeaderService | undefined;
}

/**
 * Runs a deployed task to its end and reports that end to the leader it answers to then.
 * `freeSlot` runs before the final state is reported, so the JobMaster may reuse the slot at once.
 */
export async function runTaskAttempt(
  ctx: TaskAttemptContext,
  task: RunningTask,
  jobConfig: Configuration,
  freeSlot: () => void,
): Promise<void> {
  const { tdd } = task;
  const exec = tdd.execution!;
  const jl = ctx.jobLeader()!;
  try {
    const operators = await ctx.modules.operators(tdd.module_digest, tdd.job_args, tdd.working_directory, () =>
      jl.fetchArtifact(exec.job_id, task.epoch),
    );
    const metrics = await runTask({
      tdd,
      operators,
      shuffle: ctx.shuffle,
      taskManagerId: ctx.taskManagerId,
      config: jobConfig,
      signal: task.controller.signal,
      requestSplit: async (operatorId) => {
        const res = await toLeader(ctx, task, (epoch) =>
          jl.requestSplit({ execution: exec, epoch, deploy_epoch: task.epoch, operator_id: operatorId }),
        );
        if (res.split_json) task.received.addSplit(res.split_json);
        return res;
      },
      sendCoordinationRequest: async (operatorId, requestJson) => {
        const res = await toLeader(ctx, task, (epoch) =>
          jl.sendCoordinationRequest({
            execution: exec,
            epoch,
            deploy_epoch: task.epoch,
            operator_id: operatorId,
            request_json: requestJson,
          }),
        );
        task.received.addResponse(operatorId, res.response_json);
        return res.response_json;
      },
    });
    ctx.logger.info(
      { event: 'task.finish', ...taskLogOf(tdd), recordsIn: metrics.records_in, recordsOut: metrics.records_out },
      'task finished',
    );
    freeSlot();
    if (task.keepRunning)
      ctx.held.put(attemptKeyOf(exec, task.epoch), { tdd, state: 'FINISHED', received: task.received, metrics });
    await jl.reportTaskState({
      execution: exec,
      state: 'FINISHED',
      task_manager_id: ctx.taskManagerId,
      epoch: task.leaderEpoch,
      deploy_epoch: task.epoch,
      io_metrics: metrics,
    });
  } catch (err) {
    freeSlot();
    if (task.controller.signal.aborted) {
      const reason = String(task.controller.signal.reason);
      if (task.canceledByJobMaster) {
        ctx.logger.info({ event: 'task.cancel', ...taskLogOf(tdd), reason }, 'task canceled');
        await jl.reportTaskState({
          execution: exec,
          state: 'CANCELED',
          task_manager_id: ctx.taskManagerId,
          epoch: task.leaderEpoch,
          deploy_epoch: task.epoch,
        });
      } else {
        ctx.logger.warn({ event: 'task.fail', ...taskLogOf(tdd), reason }, 'task failed');
      }
      return;
    }
    const pnf = err instanceof InputPartitionNotFoundError ? err : undefined;
    const code = err instanceof ReboundError ? err.code : ErrorCode.USER_CODE;
    const message = `${tdd.vertex_name} (${exec.subtask + 1}/${tdd.parallelism}) attempt ${exec.attempt}: ${errorMessage(err)}`;
    ctx.logger.warn({ event: 'task.fail', ...taskLogOf(tdd), code, err: errorMessage(err) }, 'task failed');
    if (task.keepRunning)
      ctx.held.put(attemptKeyOf(exec, task.epoch), { tdd, state: 'FAILED', received: task.received });
    await jl.reportTaskState({
      execution: exec,
      state: 'FAILED',
      task_manager_id: ctx.taskManagerId,
      epoch: task.leaderEpoch,
      deploy_epoch: task.epoch,
      error_code: code,
      error_message: message,
      missing_partition: pnf?.partition ?? null,
      unreachable_shuffle_workers: [...unreachableShuffleWorkers(err)],
    });
  }
}

/**
 * Calls the leader a task answers to. A task of a keep-running job that has no leader waits
 * for one to adopt it, and retries a call that failed because its leader went away; the wait
 * ends when the task is aborted (canceled, or no leader within taskmanager.registration.timeout).
 */
export async function toLeader<T>(
  ctx: Pick<TaskAttemptContext, 'config' | 'logger' | 'jobLeader'>,
  task: RunningTask,
  call: (epoch: number) => Promise<T>,
): Promise<T> {
  const pollMs = ctx.config.getDurationMs('high-availability.lease.poll-interval');
  let waiting = false;
  for (;;) {
    const epoch = task.leaderEpoch;
    if (!task.keepRunning || ctx.jobLeader()?.connectedEpoch() === epoch) {
      try {
        const answer = await call(epoch);
        // Adopted by a newer leader while the call was out: that leader decided from a report
        // that did not have this answer (a split, a block of ids), so its coordinators may hand
        // the same thing to another subtask. The answer is dropped and the new leader asked.
        // A leader paused past its lease and resumed answered such calls (scenario (f)).
        if (task.leaderEpoch === epoch) return answer;
        ctx.logger.info(
          { event: 'task.stale-answer', ...taskLogOf(task.tdd), answeredEpoch: epoch, leaderEpoch: task.leaderEpoch },
          'dropped an answer of a leader that no longer leads the task; asking the new one',
        );
        continue;
      } catch (err) {
        // UNAVAILABLE: the leader went away mid-call, or is still reconciling the job.
        const leaderGone = ctx.jobLeader()?.connectedEpoch() !== epoch || task.leaderEpoch !== epoch;
        const unavailable = err instanceof ReboundError && err.code === ErrorCode.UNAVAILABLE;
        if (!task.keepRunning || !(leaderGone || unavailable)) throw err;
      }
    }
    if (task.controller.signal.aborted) throw new TaskCanceledError(String(task.controller.signal.reason));
    if (!waiting) {
      waiting = true;
      ctx.logger.info(
        { event: 'task.await-leader', ...taskLogOf(task.tdd), leaderEpoch: task.leaderEpoch },
        'a task waits for a leader to answer its request',
      );
    }
    await sleep(pollMs, task.controller.signal).catch(() => undefined);
  }
}
