import { describe, expect, it } from 'vitest';
import { accountRunningTasks, accountTasks, parseTaskEvents, type Disruption, type TaskEvent } from './task-log.js';

function ev(event: TaskEvent['event'], subtask: number, attempt: number, tm: string, time: number): TaskEvent {
  return { event, jobId: 'j', vertexId: 'v', vertexName: 'Source', subtask, attempt, taskManagerId: tm, time };
}

describe('parseTaskEvents', () => {
  it('reads task lifecycle lines of a pino log and skips the rest', () => {
    const log = [
      JSON.stringify({
        level: 30,
        time: 5,
        event: 'task.deploy',
        jobId: 'j',
        vertexId: 'v',
        vertexName: 'Source',
        subtask: 1,
        attempt: 0,
        epoch: 2,
        msg: 'task deployed',
      }),
      'not json "task.deploy"',
      JSON.stringify({ level: 30, time: 6, msg: 'registered' }),
      JSON.stringify({
        level: 30,
        time: 9,
        event: 'task.finish',
        jobId: 'j',
        vertexId: 'v',
        vertexName: 'Source',
        subtask: 1,
        attempt: 0,
        taskManagerId: 'tm-1',
      }),
    ].join('\n');
    expect(parseTaskEvents(log, 'tm-9')).toEqual([
      {
        event: 'task.deploy',
        jobId: 'j',
        vertexId: 'v',
        vertexName: 'Source',
        subtask: 1,
        attempt: 0,
        taskManagerId: 'tm-9',
        epoch: 2,
        time: 5,
      },
      {
        event: 'task.finish',
        jobId: 'j',
        vertexId: 'v',
        vertexName: 'Source',
        subtask: 1,
        attempt: 0,
        taskManagerId: 'tm-1',
        time: 9,
      },
    ]);
  });
});

describe('accountTasks', () => {
  const events = [
    ev('task.deploy', 0, 0, 'tm-1', 1),
    ev('task.finish', 0, 0, 'tm-1', 10), // durable, TM lives: kept
    ev('task.deploy', 1, 0, 'tm-1', 1),
    ev('task.finish', 1, 0, 'tm-1', 20), // durable, TM lives, rerun: violation
    ev('task.deploy', 2, 0, 'tm-2', 1),
    ev('task.finish', 2, 0, 'tm-2', 30), // TM killed: rerun is fine
    ev('task.deploy', 3, 0, 'tm-1', 1),
    ev('task.finish', 3, 0, 'tm-1', 99), // not durable: rerun is fine
    ev('task.deploy', 4, 0, 'tm-1', 1), // running at the fault: not counted
    ev('task.deploy', 1, 1, 'tm-3', 200),
    ev('task.deploy', 2, 1, 'tm-3', 200),
    ev('task.deploy', 3, 1, 'tm-3', 200),
    ev('task.deploy', 4, 1, 'tm-3', 200),
  ];
  const d: Disruption = {
    at: 100,
    label: 'leader-kill',
    durableFinished: new Map([
      ['v#0', 0],
      ['v#1', 0],
      ['v#2', 0],
    ]),
  };

  it('counts finished tasks kept and rerun, and flags durable reruns on live TaskManagers', () => {
    const a = accountTasks(events, 'j', [d], [{ id: 'tm-2', at: 100 }]);
    expect(a).toMatchObject({ finishedBeforeFault: 4, kept: 1, rerun: 3, violations: 1, rerunExcused: 0 });
    expect(a.reruns.find((r) => r.violation)).toMatchObject({
      subtask: 'v#1',
      taskManagerId: 'tm-1',
      durable: true,
      taskManagerLived: true,
    });
    expect(a.reruns.find((r) => r.subtask === 'v#2')).toMatchObject({ taskManagerLived: false, violation: false });
    expect(a.reruns.find((r) => r.subtask === 'v#3')).toMatchObject({ durable: false, violation: false });
  });

  it('excuses reruns whose output the fault destroyed', () => {
    const a = accountTasks(events, 'j', [{ ...d, destroyedPartitions: new Set(['v#1']) }], [{ id: 'tm-2', at: 100 }]);
    expect(a).toMatchObject({ violations: 0, rerunExcused: 1 });
  });

  it('still excuses a rerun when the partition was deleted by an earlier fault (chaos seed 1003)', () => {
    const deleted: Disruption = {
      at: 50,
      label: 'partition-delete',
      durableFinished: new Map([['v#1', 0]]),
      destroyedPartitions: new Set(['v#1']),
    };
    const a = accountTasks(events, 'j', [deleted, d], [{ id: 'tm-2', at: 100 }]);
    expect(a.reruns.find((r) => r.subtask === 'v#1')).toMatchObject({ disruption: 'leader-kill', violation: false });
    expect(a.reruns.find((r) => r.subtask === 'v#1')?.excuse).toMatch(/destroyed its partition/);
    expect(a.violations).toBe(0);
  });

  it('on remote shuffle a dead, cut-off or released TaskManager excuses nothing; a destroyed partition does', () => {
    const kills = [{ id: 'tm-2', at: 100 }];
    const remote = accountTasks(events, 'j', [d], kills, 'shuffle-worker');
    expect(remote).toMatchObject({ violations: 2, rerunExcused: 0 });
    expect(remote.reruns.find((r) => r.subtask === 'v#2')).toMatchObject({ taskManagerLived: true, violation: true });
    const cut: Disruption = { ...d, lostOn: new Set(['tm-1', 'tm-2']), releasedOn: new Set(['tm-1', 'tm-2']) };
    expect(accountTasks(events, 'j', [cut], kills, 'shuffle-worker').violations).toBe(2);
    const lostOnWorker: Disruption = { ...d, destroyedPartitions: new Set(['v#1', 'v#2']) };
    expect(accountTasks(events, 'j', [lostOnWorker], kills, 'shuffle-worker')).toMatchObject({
      violations: 0,
      rerunExcused: 2,
    });
  });

  it('excuses reruns on a TaskManager a network cut cost its registration, and only there', () => {
    const cut: Disruption = { ...d, label: 'tm-partition: tm-1 cut off', lostOn: new Set(['tm-1']) };
    const a = accountTasks(events, 'j', [cut], [{ id: 'tm-2', at: 100 }]);
    expect(a).toMatchObject({ violations: 0, rerunExcused: 1 });
    expect(a.reruns.find((r) => r.subtask === 'v#1')?.excuse).toMatch(
      /heartbeat timeout during "tm-partition: tm-1 cut off"/,
    );
    const elsewhere = accountTasks(events, 'j', [{ ...cut, lostOn: new Set(['tm-3']) }], [{ id: 'tm-2', at: 100 }]);
    expect(elsewhere.violations).toBe(1);
  });

  it('attributes a redeploy to the latest disruption before it', () => {
    const later: Disruption = { at: 150, label: 'second', durableFinished: new Map() };
    const a = accountTasks(events, 'j', [d, later], []);
    // Nothing was deployed between 100 and 150: every finished task was kept through the first fault.
    expect(a.reruns.every((r) => r.disruption === 'second')).toBe(true);
    expect(a.violations).toBe(0);
  });
});

describe('accountRunningTasks (keep-running-tasks)', () => {
  const kill = (at: number, extra: Partial<Disruption> = {}): Disruption => ({
    at,
    label: 'leader-kill: SIGKILL jm-1 (epoch 1)',
    durableFinished: new Map(),
    ...extra,
  });

  it('counts the subtasks running at a leader kill and which of them were deployed again', () => {
    const events = [
      ev('task.deploy', 0, 0, 'tm-1', 10),
      ev('task.deploy', 1, 0, 'tm-2', 11),
      ev('task.deploy', 2, 0, 'tm-3', 12),
      ev('task.finish', 2, 0, 'tm-3', 50),
      // 0 adopted (no deploy after the kill); 1 deployed again on tm-2, which lived.
      ev('task.deploy', 1, 1, 'tm-1', 150),
      ev('task.finish', 0, 0, 'tm-1', 160),
    ];
    const acct = accountRunningTasks(events, 'j', [kill(100)], []);
    expect(acct).toMatchObject({ runningAtFault: 2, redeployed: 1, redeployedOnLiveTaskManager: 1 });
    expect(acct.redeploys[0]).toMatchObject({ subtask: 'v#1', taskManagerId: 'tm-2', onLiveTaskManager: true });
  });

  it('excuses a TaskManager that died or was cut off, and ignores faults that are not a leader kill or pause', () => {
    const events = [
      ev('task.deploy', 0, 0, 'tm-1', 10),
      ev('task.deploy', 1, 0, 'tm-2', 11),
      ev('task.deploy', 0, 1, 'tm-3', 150),
      ev('task.deploy', 1, 1, 'tm-3', 151),
    ];
    const cut = kill(100, { lostOn: new Set(['tm-2']) });
    const acct = accountRunningTasks(events, 'j', [cut], [{ id: 'tm-1', at: 120 }]);
    expect(acct).toMatchObject({ runningAtFault: 2, redeployed: 2, redeployedOnLiveTaskManager: 0 });
    const tmKill = { ...kill(100), label: 'tm-kill-leaderless: SIGKILL tm-1' };
    expect(accountRunningTasks(events, 'j', [tmKill], [])).toMatchObject({ runningAtFault: 0, redeployed: 0 });
  });

  it('excuses an attempt that failed by itself before it was deployed again, not one its TaskManager aborted', () => {
    // Chaos seed 277: a reducer whose input partition was deleted failed while no leader led.
    const failed = { ...ev('task.fail', 0, 0, 'tm-1', 120), code: 'PARTITION_NOT_FOUND' };
    const aborted = ev('task.fail', 1, 0, 'tm-2', 121);
    const events = [
      ev('task.deploy', 0, 0, 'tm-1', 10),
      ev('task.deploy', 1, 0, 'tm-2', 11),
      failed,
      aborted,
      ev('task.deploy', 0, 1, 'tm-1', 150),
      ev('task.deploy', 1, 1, 'tm-2', 151),
    ];
    const acct = accountRunningTasks(events, 'j', [kill(100)], []);
    expect(acct).toMatchObject({ runningAtFault: 2, redeployed: 2, redeployedOnLiveTaskManager: 1 });
    expect(acct.redeploys.find((r) => r.onLiveTaskManager)).toMatchObject({ subtask: 'v#1' });
  });
});
