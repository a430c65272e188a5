import { describe, expect, it } from 'vitest';
import { HA_BACKENDS, POISON_RUNTIME_MODES, describeFault, faultKindsFor } from './faults.js';
import { POISON_RUNTIME_CONFIG, RUNTIME_REASONS, poisonEndProblem } from './inject-poison.js';
import { planRun } from './plan.js';

/** Failures as packages/jobmaster/src/user-code/ words them under POISON_RUNTIME_CONFIG. */
const FAILURES: Readonly<Record<(typeof POISON_RUNTIME_MODES)[number], string>> = {
  'timer-throw': 'user code on the JobMaster crashed: Error: chaos poison: the enumerator threw from a timer',
  'split-exit': 'user code on the JobMaster called process.exit(3)',
  'coordinator-loop':
    'user code on the JobMaster stopped answering for 2311 ms (jobmaster.user-code.call-timeout 2000 ms): an endless loop?',
  'split-alloc': 'user code on the JobMaster ran out of its heap (jobmaster.user-code.heap-size 64 MiB)',
};

describe('poison-runtime', () => {
  it('is drawn only when a pool names it, so recorded seeds keep their plans', () => {
    for (const ha of HA_BACKENDS)
      for (const partitions of [false, true])
        for (const shuffleWorkers of [0, 2])
          expect(faultKindsFor({ ha, partitions, shuffleWorkers })).not.toContain('poison-runtime');
    for (let seed = 0; seed < 300; seed++)
      expect(planRun(seed).faults.map((f) => f.kind)).not.toContain('poison-runtime');
  });

  it('draws every mode from a pool that names it, each with a trigger inside the job', () => {
    const modes = new Set<string>();
    for (let seed = 8000; seed < 8020; seed++)
      for (const f of planRun(seed, { pool: ['poison-runtime'] }).faults) {
        if (f.kind !== 'poison-runtime') throw new Error(`unexpected ${f.kind}`);
        modes.add(f.mode);
        expect(describeFault(f)).toMatch(new RegExp(`^poison-runtime\\(${f.mode}\\) @\\d+t\\+\\d+ms$`));
      }
    expect([...modes].sort()).toEqual([...POISON_RUNTIME_MODES].sort());
  });

  it('expects the reason of its own mode, under its own shortened limits', () => {
    expect(POISON_RUNTIME_CONFIG).toEqual({
      'jobmaster.user-code.call-timeout': '2 s',
      'jobmaster.user-code.heap-size': '64 mb',
    });
    for (const mode of POISON_RUNTIME_MODES)
      for (const other of POISON_RUNTIME_MODES)
        expect(RUNTIME_REASONS[mode].test(FAILURES[other]), `${mode} vs ${other}`).toBe(mode === other);
  });
});

describe('poisonEndProblem', () => {
  const reason = RUNTIME_REASONS['split-exit'];

  it('accepts only FAILED with the reason', () => {
    expect(poisonEndProblem('FAILED', FAILURES['split-exit'], reason, false)).toBeUndefined();
    expect(poisonEndProblem('FINISHED', '', reason, false)).toBe('ended FINISHED, not FAILED');
    expect(poisonEndProblem('CANCELED', FAILURES['split-exit'], reason, true)).toBe('ended CANCELED, not FAILED');
    expect(poisonEndProblem('FAILED', `${FAILURES['split-alloc']}\n  at x`, reason, false)).toBe(
      `FAILED without its reason ${String(reason)}: ${JSON.stringify(FAILURES['split-alloc'])}`,
    );
  });

  it('excuses a job given up after load crashes only when the harness killed JobMasters', () => {
    const givenUp =
      'job j was not loaded again: 2 JobMaster(s) in a row died while loading it (jobmaster.job-load.max-crashes=2)';
    expect(poisonEndProblem('FAILED', givenUp, reason, true)).toBeUndefined();
    expect(poisonEndProblem('FAILED', givenUp, reason, false)).toMatch(/^FAILED without its reason/);
  });
});
