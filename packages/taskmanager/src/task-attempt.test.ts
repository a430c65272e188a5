import { Configuration, silentLogger } from '@rebound/core';
import type { TaskDeploymentDescriptor__Output } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { AttemptReceipts } from './held-tasks.js';
import type { JobLeaderService } from './job-leader-service.js';
import type { RunningTask } from './running-task.js';
import { toLeader } from './task-attempt.js';

function keptTask(leaderEpoch: number): RunningTask {
  return {
    tdd: {
      epoch: leaderEpoch,
      execution: { job_id: 'j'.repeat(32), vertex_id: 'v', subtask: 0, attempt: 0 },
      vertex_name: 'Source',
    } as unknown as TaskDeploymentDescriptor__Output,
    controller: new AbortController(),
    epoch: leaderEpoch,
    leaderEpoch,
    keepRunning: true,
    leaderlessSinceMs: undefined,
    received: new AttemptReceipts(10),
    canceledByJobMaster: false,
  };
}

describe('toLeader', () => {
  it('drops an answer that comes after a newer leader adopted the task, and asks that leader', async () => {
    const task = keptTask(4);
    let connected = 4;
    const ctx = {
      config: Configuration.of({ 'high-availability.lease.poll-interval': '10 ms' }),
      logger: silentLogger(),
      jobLeader: () => ({ connectedEpoch: () => connected }) as unknown as JobLeaderService,
    };
    const asked: number[] = [];
    let answerOld = (_: string): void => undefined;
    const answer = toLeader(ctx, task, (epoch) => {
      asked.push(epoch);
      if (epoch === 4) return new Promise<string>((resolve) => (answerOld = resolve));
      return Promise.resolve(`split from epoch ${epoch}`);
    });
    // Epoch 4 is paused with the request in flight; epoch 5 takes the task over (its report did
    // not have the answer), then epoch 4 wakes up and answers.
    connected = 5;
    task.leaderEpoch = 5;
    answerOld('split from epoch 4');
    expect(await answer).toBe('split from epoch 5');
    expect(asked).toEqual([4, 5]);
  });
});
