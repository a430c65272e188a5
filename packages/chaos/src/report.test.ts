import { describe, expect, it } from 'vitest';
import { summarize, summaryLines } from './report.js';
import { classifyRecovery, type FaultRecord, type RunResult } from './results.js';

const SUBMITTED = 1_000_000;

function fault(injected: boolean, atMs?: number, finished?: number, kind: FaultRecord['kind'] = 'leader-kill'): FaultRecord {
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
    expect(classifyRecovery([fault(true, 5_000, 4, 'forged-rpc'), fault(true, 6_000, 4, 'damaged-job-dir')], SUBMITTED, end)).toBe('recovered');
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
});
