import { describe, expect, it } from 'vitest';
import { EXCLUSIVE_FAULTS, FAULT_KINDS, crashPointConfig, drawFaultKinds, type FaultKind } from './faults.js';
import { expectedLines } from './jobs.js';
import { planRun } from './plan.js';
import { Prng } from './prng.js';

describe('Prng', () => {
  it('gives the same sequence for the same seed and different ones for neighbouring seeds', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const xs = Array.from({ length: 20 }, () => a.next());
    expect(Array.from({ length: 20 }, () => b.next())).toEqual(xs);
    const c = new Prng(43);
    expect(Array.from({ length: 20 }, () => c.next())).not.toEqual(xs);
    for (const x of xs) expect(x >= 0 && x < 1).toBe(true);
  });

  it('draws integers within bounds, both ends included', () => {
    const p = new Prng(7);
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) seen.add(p.int(2, 5));
    expect([...seen].sort()).toEqual([2, 3, 4, 5]);
  });
});

describe('planRun', () => {
  it('is a pure function of the seed and options: a run can be replayed from its seed', () => {
    for (let seed = 0; seed < 50; seed++) {
      expect(planRun(seed)).toEqual(planRun(seed));
      expect(planRun(seed, { pool: ['leader-kill', 'torn-tail'] })).toEqual(planRun(seed, { pool: ['leader-kill', 'torn-tail'] }));
    }
  });

  it('draws every fault kind and every job over a few hundred seeds', () => {
    const kinds = new Set<string>();
    const jobs = new Set<string>();
    for (let seed = 0; seed < 300; seed++) {
      const p = planRun(seed);
      jobs.add(p.job.job);
      for (const f of p.faults) kinds.add(f.kind);
    }
    expect([...kinds].sort()).toEqual([...FAULT_KINDS].sort());
    expect([...jobs].sort()).toEqual(['aggregation', 'join', 'wordcount']);
  });

  it('never combines a run-shaping fault with another fault', () => {
    for (let seed = 0; seed < 500; seed++) {
      const kinds = planRun(seed, { faultsPerRun: 3 }).faults.map((f) => f.kind);
      if (kinds.some((k) => EXCLUSIVE_FAULTS.has(k))) expect(kinds).toHaveLength(1);
    }
  });

  it('runs every kind of a two-kind pool when two faults run per run', () => {
    const pool: FaultKind[] = ['torn-tail', 'flipped-byte'];
    for (let seed = 0; seed < 20; seed++) {
      expect(drawFaultKinds(new Prng(seed), { pool, faultsPerRun: 2 }).sort()).toEqual([...pool].sort());
    }
  });

  it('keeps triggers inside the job: a first fault fires before the last source subtasks finish', () => {
    for (let seed = 0; seed < 200; seed++) {
      const p = planRun(seed, { pool: ['leader-kill'] });
      const f = p.faults[0]!;
      if (f.kind !== 'leader-kill') throw new Error('unexpected kind');
      const sources = p.job.job === 'wordcount' ? p.job.files : p.job.job === 'aggregation' ? Math.ceil(p.job.rows / p.job.splitSize) : Infinity;
      expect(f.trigger.afterFinishedTasks).toBeLessThan(sources);
    }
  });

  it('uses a given crash point and turns it into debug.crash settings', () => {
    const p = planRun(3, { pool: ['crash-point'], crashPoint: { kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 2 } });
    expect(p.faults).toEqual([{ kind: 'crash-point', point: { kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 2 } }]);
    expect(crashPointConfig({ kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 2 })).toEqual({ 'debug.crash.after-event': 'ExecutionVertexFinished:2' });
    expect(crashPointConfig({ kind: 'after-deploy', n: 4 })).toEqual({ 'debug.crash.after-deploy': '4' });
  });

  it('--slowdown keeps the input, output and faults of a seed and multiplies only the delays', () => {
    for (const job of ['wordcount', 'aggregation', 'join'] as const) {
      const a = planRun(199, { job, pool: ['torn-tail', 'flipped-byte'], faultsPerRun: 2 });
      const b = planRun(199, { job, pool: ['torn-tail', 'flipped-byte'], faultsPerRun: 2, slowdown: 3 });
      expect(b.faults).toEqual(a.faults);
      expect(expectedLines(b.job)).toEqual(expectedLines(a.job));
      const delay = (p: typeof a): number => (p.job.job === 'wordcount' ? p.job.lineDelayMs : p.job.batchDelayMs);
      expect(delay(b)).toBe(3 * delay(a));
      expect({ ...b.job, lineDelayMs: 0, batchDelayMs: 0 }).toEqual({ ...a.job, lineDelayMs: 0, batchDelayMs: 0 });
    }
  });
});
