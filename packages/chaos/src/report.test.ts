import { describe, expect, it } from 'vitest';
import { batchOutcome, summarize, summaryLines } from './report.js';
import { classifyRecovery, countFinishedAtFaults, type FaultRecord, type RunResult } from './results.js';
import type { TaskEvent } from './task-log.js';

const SUBMITTED = 1_000_000;

function fault(
  injected: boolean,
  atMs?: number,
  finished?: number,
  kind: FaultRecord['kind'] = 'leader-kill',
): FaultRecord {
  return {
    kind,
    plan: { kind: 'leader-kill', trigger: { afterFinishedTasks: 0, delayMs: 0 } } as unknown as FaultRecord['plan'],
    description: 'leader-kill',
    injected,
    ...(atMs !== undefined ? { atMs } : {}),
    ...(finished !== undefined ? { finishedTasksAtFault: finished } : {}),
    notes: [],
  };
}

function run(outcome: RunResult['outcome'], faults: FaultRecord[], jobEndedAt: number | undefined): RunResult {
  return {
    run: 0,
    seed: 1,
    job: 'wordcount',
    jobDescription: '',
    faults,
    outcome,
    recovery: classifyRecovery(faults, SUBMITTED, jobEndedAt),
    problems: [],
    warnings: [],
    recoveries: [],
    observedRecoveryMs: [],
    spontaneousFailovers: 0,
    durationMs: 0,
    replay: '',
  };
}

describe('chaos accounting', () => {
  it('counts a fault as testing recovery only with finished work, before the job ended', () => {
    const end = SUBMITTED + 10_000;
    expect(classifyRecovery([fault(true, 5_000, 3)], SUBMITTED, end)).toBe('recovered');
    expect(classifyRecovery([fault(true, 5_000, 0)], SUBMITTED, end)).toBe('no-finished-work');
    expect(classifyRecovery([fault(true, 10_000, 8)], SUBMITTED, end)).toBe('after-job-end');
    expect(classifyRecovery([fault(true, 12_000, 8)], SUBMITTED, end)).toBe('after-job-end');
    expect(classifyRecovery([fault(false)], SUBMITTED, end)).toBe('not-injected');
    // A job that never ended: every injected fault came before its end.
    expect(classifyRecovery([fault(true, 5_000, 2)], SUBMITTED, undefined)).toBe('recovered');
    // Two faults: one real test of recovery is enough; a fault that was not injected never counts.
    expect(classifyRecovery([fault(true, 1_000, 0), fault(true, 6_000, 4)], SUBMITTED, end)).toBe('recovered');
    expect(classifyRecovery([fault(false, 5_000, 4), fault(true, 11_000, 4)], SUBMITTED, end)).toBe('after-job-end');
    // A poison job or forged calls take no leader down: with finished work they test containment, not recovery.
    expect(classifyRecovery([fault(true, 5_000, 4, 'poison-job')], SUBMITTED, end)).toBe('contained');
    expect(
      classifyRecovery([fault(true, 5_000, 4, 'forged-rpc'), fault(true, 6_000, 4, 'damaged-job-dir')], SUBMITTED, end),
    ).toBe('recovered');
    expect(classifyRecovery([fault(true, 11_000, 4, 'forged-rpc')], SUBMITTED, end)).toBe('after-job-end');
  });

  it('reports correct recoveries apart from runs that passed without testing one', () => {
    const end = SUBMITTED + 10_000;
    const s = summarize([
      run('ok', [fault(true, 5_000, 3)], end),
      run('ok', [fault(true, 5_000, 0)], end),
      run('ok', [fault(true, 11_000, 9)], end),
      run('ok', [fault(false)], end),
      run('wrong-output', [fault(true, 5_000, 3)], end),
    ]);
    expect(s).toMatchObject({ runs: 5, passed: 4, failed: 1, correctRecoveries: 1 });
    expect(s.passedBy).toEqual({ recovered: 1, 'no-finished-work': 1, 'after-job-end': 1, 'not-injected': 1 });
    expect(summaryLines(s).join('\n')).toContain('correct recoveries: 1 of 4 passed runs');
  });

  it("takes the finished work at a fault from the TaskManagers' task logs, not from the leader", () => {
    const end = SUBMITTED + 10_000;
    const ev = (event: TaskEvent['event'], subtask: number, time: number, jobId = 'j'): TaskEvent => ({
      event,
      jobId,
      vertexId: 'v',
      vertexName: 'Source',
      subtask,
      attempt: 0,
      taskManagerId: 'tm-1',
      time: SUBMITTED + time,
    });
    // Whatever the leader said at the fault (here 5 finished), the TaskManagers finished nothing
    // before it: subtask 0 finished after the fault, subtask 1 was deployed again before it, and
    // the finish of another job does not count.
    const events = [
      ev('task.deploy', 0, 100),
      ev('task.deploy', 1, 100),
      ev('task.finish', 1, 2_000),
      ev('task.deploy', 1, 4_000),
      ev('task.finish', 0, 5_001),
      ev('task.finish', 2, 1_000, 'other-job'),
    ];
    const faults = [fault(true, 5_000, 5)];
    countFinishedAtFaults(faults, events, 'j', SUBMITTED);
    expect(faults[0]!.finishedTasksAtFault).toBe(0);
    expect(classifyRecovery(faults, SUBMITTED, end)).toBe('no-finished-work');
    // A finish a TaskManager logged before the fault makes it a test of recovery, whatever the leader said.
    const later = [fault(true, 6_000, 0)];
    countFinishedAtFaults(later, events, 'j', SUBMITTED);
    expect(later[0]!.finishedTasksAtFault).toBe(1);
    expect(classifyRecovery(later, SUBMITTED, end)).toBe('recovered');
    // A fault that was not injected is not counted at all.
    const missed = [fault(false)];
    countFinishedAtFaults(missed, events, 'j', SUBMITTED);
    expect(missed[0]!.finishedTasksAtFault).toBeUndefined();
  });
});

describe('chaos batch verdict', () => {
  const end = SUBMITTED + 10_000;

  it('passes a batch only when every requested run ran, none failed, and a fault was injected', () => {
    const s = summarize([run('ok', [fault(true, 5_000, 3)], end), run('ok', [fault(false)], end)]);
    expect(batchOutcome(s, 2, 7)).toEqual({
      verdict: 'passed',
      exitCode: 0,
      line: 'chaos: all 2 run(s) passed (seed 7)',
    });
    const failed = summarize([run('ok', [fault(true, 5_000, 3)], end), run('stuck', [fault(true, 5_000, 3)], end)]);
    expect(batchOutcome(failed, 2, 7)).toMatchObject({ verdict: 'failed', exitCode: 1 });
  });

  it('does not pass a batch cut short by its time budget', () => {
    const s = summarize([run('ok', [fault(true, 5_000, 3)], end)]);
    const o = batchOutcome(s, 200, 3000);
    expect(o).toMatchObject({ verdict: 'partial', exitCode: 3 });
    expect(o.line).toBe(
      'chaos: PARTIAL, not passed: 1 of 200 requested run(s) ran before the time budget ran out, none failed (seed 3000)',
    );
    expect(o.line).not.toMatch(/all .* passed/);
  });

  it('does not pass a batch in which no fault was injected', () => {
    const s = summarize([run('ok', [fault(false)], end), run('ok', [fault(false), fault(false)], end)]);
    const o = batchOutcome(s, 2, 5);
    expect(o).toMatchObject({ verdict: 'inconclusive', exitCode: 3 });
    expect(o.line).toBe('chaos: INCONCLUSIVE, not passed: no fault was injected in 2 run(s) (seed 5)');
    // An empty batch (a budget used up before the first run) is no pass either.
    expect(batchOutcome(summarize([]), 1, 5).verdict).toBe('partial');
    expect(batchOutcome(summarize([]), 0, 5).verdict).toBe('inconclusive');
  });
});
