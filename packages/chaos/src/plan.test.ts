import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BY_NAME_ONLY,
  ETCD_FAULTS,
  EXCLUSIVE_FAULTS,
  FAULT_KINDS,
  FILE_HA_FAULTS,
  PARTITION_FAULTS,
  crashPointConfig,
  faultKindsFor,
  faultUnavailable,
  type FaultKind,
} from './faults.js';
import { drawFaultKinds } from './fault-draw.js';

/** The kinds of the remote shuffle: none is drawn on a TaskManager-shuffle run without a pool. */
const SHUFFLE_KINDS: ReadonlySet<FaultKind> = new Set([
  'leader-and-tm-kill',
  'shuffle-worker-kill',
  'shuffle-worker-partition-damage',
]);
import { JOB_NAMES, expectedLines } from './jobs.js';
import { planRun, type RunPlanOptions } from './plan.js';
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
      expect(planRun(seed, { pool: ['leader-kill', 'torn-tail'] })).toEqual(
        planRun(seed, { pool: ['leader-kill', 'torn-tail'] }),
      );
    }
  });

  it('draws every fault kind of file HA, and every job, over a few hundred seeds', () => {
    const kinds = new Set<string>();
    const jobs = new Set<string>();
    for (let seed = 0; seed < 300; seed++) {
      const p = planRun(seed);
      jobs.add(p.job.job);
      for (const f of p.faults) kinds.add(f.kind);
    }
    expect([...kinds].sort()).toEqual(
      FAULT_KINDS.filter(
        (k) => !ETCD_FAULTS.has(k) && !PARTITION_FAULTS.has(k) && !SHUFFLE_KINDS.has(k) && !BY_NAME_ONLY.has(k),
      ).sort(),
    );
    expect([...jobs].sort()).toEqual(['aggregation', 'join', 'wordcount']);
  });

  it('draws etcd and partition kinds only where the run can inject them', () => {
    const seen = (ha: 'file' | 'etcd', partitions: boolean): Set<FaultKind> => {
      const kinds = new Set<FaultKind>();
      for (let seed = 0; seed < 400; seed++)
        for (const f of planRun(seed, { ha, partitions }).faults) kinds.add(f.kind);
      return kinds;
    };
    const etcdAll = seen('etcd', true);
    expect([...etcdAll].sort()).toEqual(
      FAULT_KINDS.filter((k) => !FILE_HA_FAULTS.has(k) && !SHUFFLE_KINDS.has(k) && !BY_NAME_ONLY.has(k)).sort(),
    );
    const etcdNoCut = seen('etcd', false);
    for (const k of PARTITION_FAULTS) expect(etcdNoCut.has(k)).toBe(false);
    for (const k of ['etcd-member-kill', 'etcd-outage'] as const) expect(etcdNoCut.has(k)).toBe(true);
    const fileCut = seen('file', true);
    for (const k of ETCD_FAULTS) expect(fileCut.has(k)).toBe(false);
    expect(fileCut.has('tm-partition') && fileCut.has('leader-partition') && fileCut.has('damaged-job-dir')).toBe(true);
    expect(faultKindsFor({ ha: 'file', partitions: false, shuffleWorkers: 0 })).toEqual(FAULT_KINDS.slice(0, 13));
    expect(faultUnavailable('etcd-outage', { ha: 'file', partitions: true, shuffleWorkers: 0 })).toBe(
      'etcd-outage needs --ha etcd',
    );
    expect(faultUnavailable('tm-partition', { ha: 'etcd', partitions: false, shuffleWorkers: 0 })).toBe(
      'tm-partition needs --partitions',
    );
    expect(faultUnavailable('damaged-job-dir', { ha: 'etcd', partitions: true, shuffleWorkers: 0 })).toMatch(
      /has none on --ha etcd/,
    );
  });

  it('keeps the plans of file-HA seeds when the new kinds are added (recorded seeds replay as before)', () => {
    for (let seed = 0; seed < 100; seed++) {
      const p = planRun(seed);
      expect(p).toEqual({ ...planRun(seed, { pool: FAULT_KINDS.slice(0, 13) }), ha: 'file', partitions: false });
    }
    // A recorded plan: seed 277 with three faults (test/chaos/chaos.test.ts).
    expect(
      planRun(277, {
        pool: ['leader-kill', 'tm-kill-leaderless', 'partition-delete'],
        faultsPerRun: 3,
        job: 'wordcount',
      }).faults.map((f) => f.kind),
    ).toEqual(
      planRun(277, {
        pool: ['leader-kill', 'tm-kill-leaderless', 'partition-delete'],
        faultsPerRun: 3,
        job: 'wordcount',
        ha: 'etcd',
        partitions: true,
      }).faults.map((f) => f.kind),
    );
  });

  it('keeps the default plans of recorded seeds: jobs, inputs and faults of seeds 0-299 are pinned', () => {
    // The committed batches and CI seeds replay only while the default draws stay as they were:
    // a new job or fault kind must be by-name-only, or drawn after everything else.
    const digest = (opts: RunPlanOptions): string => {
      const h = createHash('sha256');
      for (let seed = 0; seed < 300; seed++) h.update(JSON.stringify(planRun(seed, opts)));
      return h.digest('hex').slice(0, 16);
    };
    expect(digest({})).toBe('737d868a9023e158');
    expect(digest({ ha: 'etcd', partitions: true })).toBe('105f6f47aa578923');
    expect(digest({ shuffleWorkers: 2 })).toBe('5eed62c680b5ebab');
    expect(Array.from({ length: 10 }, (_, i) => planRun(3000 + i).job.job)).toEqual([
      'aggregation',
      'join',
      'join',
      'wordcount',
      'join',
      'wordcount',
      'wordcount',
      'aggregation',
      'aggregation',
      'wordcount',
    ]);
  });

  it('draws unique-ids only when named, with crash points its one vertex reaches', () => {
    for (let seed = 0; seed < 1000; seed++) expect(planRun(seed).job.job).not.toBe('unique-ids');
    for (let seed = 0; seed < 200; seed++) {
      const p = planRun(seed, { job: 'unique-ids', pool: ['crash-point'] });
      if (p.job.job !== 'unique-ids') throw new Error('unexpected job');
      expect(p.job.blockSize).toBeGreaterThanOrEqual(3);
      expect(p.job.blockSize).toBeLessThanOrEqual(20);
      expect(p.job.parallelism).toBeGreaterThanOrEqual(4);
      expect(p.job.parallelism).toBeLessThanOrEqual(p.job.files);
      const f = p.faults[0]!;
      if (f.kind !== 'crash-point' || f.point.kind === 'during-reconciling') throw new Error('unexpected fault');
      // A fault-free run deploys and finishes each of its `parallelism` subtasks once, and nothing else.
      const initialized = f.point.kind !== 'after-deploy' && f.point.eventType === 'ExecutionJobVertexInitialized';
      expect(f.point.n).toBeLessThanOrEqual(initialized ? 1 : p.job.parallelism);
    }
  });

  it('draws tm-partition cuts both within and beyond heartbeat.timeout, and etcd outages beyond the lease', () => {
    let short = 0;
    let long = 0;
    for (let seed = 0; seed < 200; seed++) {
      for (const f of planRun(seed, {
        ha: 'etcd',
        partitions: true,
        pool: ['tm-partition', 'etcd-outage'],
        faultsPerRun: 2,
      }).faults) {
        if (f.kind === 'tm-partition') {
          expect(f.durationMs < 2_500 || f.durationMs >= 4_500).toBe(true);
          if (f.durationMs < 2_500) short++;
          else long++;
        }
        if (f.kind === 'etcd-outage') expect(f.extraMs).toBeGreaterThan(0);
      }
    }
    expect(short).toBeGreaterThan(20);
    expect(long).toBeGreaterThan(20);
  });

  it('draws keep-running-tasks per run from the seed, after every other draw, and lets --keep-running-tasks override it', () => {
    const drawn = Array.from({ length: 100 }, (_, seed) => planRun(seed).keepRunningTasks);
    expect(drawn.filter(Boolean).length).toBeGreaterThan(25);
    expect(drawn.filter((x) => !x).length).toBeGreaterThan(25);
    for (let seed = 0; seed < 50; seed++) {
      const p = planRun(seed);
      expect(planRun(seed).keepRunningTasks).toBe(p.keepRunningTasks);
      // The override changes that choice only: job, faults and snapshot pause stay the seed's.
      expect(planRun(seed, { keepRunningTasks: !p.keepRunningTasks })).toEqual({
        ...p,
        keepRunningTasks: !p.keepRunningTasks,
      });
    }
  });

  it('draws the shuffle kinds only on remote-shuffle runs, without partition-delete, and keeps the other draws', () => {
    const kinds = new Set<FaultKind>();
    const replicas = new Set<number>();
    for (let seed = 0; seed < 400; seed++) {
      const p = planRun(seed, { shuffleWorkers: 2 });
      replicas.add(p.shuffleReplicas);
      expect(p.shuffleWorkers).toBe(2);
      for (const f of p.faults) {
        kinds.add(f.kind);
        if (f.kind === 'shuffle-worker-kill') expect([1, 2]).toContain(f.worker);
      }
      // The shuffle is drawn after everything else: a TaskManager-shuffle seed keeps its job and pause.
      expect(p.job).toEqual(planRun(seed).job);
    }
    for (const k of SHUFFLE_KINDS) expect(kinds.has(k)).toBe(true);
    expect(kinds.has('partition-delete')).toBe(false);
    expect([...replicas].sort()).toEqual([1, 2]);
    // One worker: one replica, whatever was drawn.
    for (let seed = 0; seed < 20; seed++) expect(planRun(seed, { shuffleWorkers: 1 }).shuffleReplicas).toBe(1);
    expect(planRun(5).shuffleReplicas).toBe(0);
    const env = { ha: 'file', partitions: false } as const;
    expect(faultUnavailable('shuffle-worker-kill', { ...env, shuffleWorkers: 0 })).toMatch(/needs --shuffle-workers/);
    expect(faultUnavailable('partition-delete', { ...env, shuffleWorkers: 1 })).toMatch(
      /shuffle-worker-partition-damage/,
    );
    expect(faultUnavailable('leader-and-tm-kill', { ...env, shuffleWorkers: 0 })).toBeUndefined();
  });

  it('draws malformed-credentials only when a pool names it', () => {
    for (const shuffleWorkers of [0, 2])
      for (const ha of ['file', 'etcd'] as const)
        expect(faultKindsFor({ ha, partitions: true, shuffleWorkers })).not.toContain('malformed-credentials');
    const p = planRun(3, { pool: ['malformed-credentials'] });
    expect(p.faults.map((f) => f.kind)).toContain('malformed-credentials');
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
      const sources =
        p.job.job === 'wordcount'
          ? p.job.files
          : p.job.job === 'aggregation'
            ? Math.ceil(p.job.rows / p.job.splitSize)
            : Infinity;
      expect(f.trigger.afterFinishedTasks).toBeLessThan(sources);
    }
  });

  it('uses a given crash point and turns it into debug.crash settings', () => {
    const p = planRun(3, {
      pool: ['crash-point'],
      crashPoint: { kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 2 },
    });
    expect(p.faults).toEqual([
      { kind: 'crash-point', point: { kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 2 } },
    ]);
    expect(crashPointConfig({ kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 2 })).toEqual({
      'debug.crash.after-event': 'ExecutionVertexFinished:2',
    });
    expect(crashPointConfig({ kind: 'after-deploy', n: 4 })).toEqual({ 'debug.crash.after-deploy': '4' });
  });

  it('--slowdown keeps the input, output and faults of a seed and multiplies only the delays', () => {
    for (const job of JOB_NAMES) {
      const a = planRun(199, { job, pool: ['torn-tail', 'flipped-byte'], faultsPerRun: 2 });
      const b = planRun(199, { job, pool: ['torn-tail', 'flipped-byte'], faultsPerRun: 2, slowdown: 3 });
      expect(b.faults).toEqual(a.faults);
      expect(expectedLines(b.job)).toEqual(expectedLines(a.job));
      const delay = (p: typeof a): number => ('lineDelayMs' in p.job ? p.job.lineDelayMs : p.job.batchDelayMs);
      expect(delay(b)).toBe(3 * delay(a));
      expect({ ...b.job, lineDelayMs: 0, batchDelayMs: 0 }).toEqual({ ...a.job, lineDelayMs: 0, batchDelayMs: 0 });
    }
  });
});
