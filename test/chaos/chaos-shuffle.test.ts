import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { SHUFFLE_WORKER_FAULTS, planRun, type FaultKind, type RunPlanOptions } from '@rebound/chaos';
import { runCiSeed } from '../chaos-seeds.js';
import { makeTempDir } from '../util.js';

/**
 * The chaos harness on the remote shuffle (`npm run chaos -- --shuffle-workers 2`): two shuffle
 * workers per run, 1 or 2 replicas. On remote shuffle a finished task whose partition survived
 * may not run again whatever became of the TaskManager that ran it (packages/chaos/README.md).
 */

interface CiRun {
  readonly seed: number;
  readonly options: RunPlanOptions;
  /** For the test's title. */
  readonly shuffle: string;
}

const REMOTE = { shuffleWorkers: 2 } as const;

const CI_RUNS: readonly CiRun[] = [
  // A host dies with the leader, then a worker dies while no leader runs; 1 replica.
  {
    seed: 21,
    shuffle: 'remote, 1 replica',
    options: { ...REMOTE, shuffleReplicas: 1, pool: ['leader-and-tm-kill', 'shuffle-worker-kill'], faultsPerRun: 2 },
  },
  // With 2 replicas: a worker killed, then a partition's data deleted while no leader runs.
  {
    seed: 32,
    shuffle: 'remote, 2 replicas',
    options: {
      ...REMOTE,
      shuffleReplicas: 2,
      pool: ['shuffle-worker-kill', 'shuffle-worker-partition-damage'],
      faultsPerRun: 2,
    },
  },
  // A flipped byte in a partition on a worker, and a worker killed.
  {
    seed: 30,
    shuffle: 'remote, 2 replicas',
    options: {
      ...REMOTE,
      shuffleReplicas: 2,
      pool: ['shuffle-worker-kill', 'shuffle-worker-partition-damage'],
      faultsPerRun: 2,
    },
  },
  // The run that found the deposed leader acting on its own pause (HeartbeatTimeouts, and the
  // adoption's consumed-split check in packages/jobmaster/src/recovery/task-adoption.ts).
  { seed: 40, shuffle: 'remote', options: { ...REMOTE, pool: ['jobmasters-pause'] } },
  // A TaskManager killed while nobody leads: its finished work stays on the workers.
  { seed: 61, shuffle: 'remote', options: { ...REMOTE, pool: ['tm-kill-leaderless', 'leader-kill'], faultsPerRun: 2 } },
  // The baseline on TaskManager shuffle: the dead TaskManager's finished producers run again.
  { seed: 51, shuffle: 'taskmanager', options: { pool: ['leader-and-tm-kill'] } },
];

/** The kinds only these runs inject (the others run on TaskManager shuffle in chaos.test.ts). */
const SHUFFLE_KINDS: readonly FaultKind[] = ['leader-and-tm-kill', ...SHUFFLE_WORKER_FAULTS];

describe('chaos harness on the remote shuffle: fixed seeds', () => {
  const injected = new Set<FaultKind>();
  let workRoot: string | undefined;
  let failed = false;

  afterAll(async () => {
    if (workRoot && !failed) await rm(workRoot, { recursive: true, force: true });
  });

  it('plans every remote-shuffle kind', () => {
    const planned = new Set(CI_RUNS.flatMap((r) => planRun(r.seed, r.options).faults.map((f) => f.kind)));
    for (const k of SHUFFLE_KINDS) expect(planned.has(k), k).toBe(true);
  });

  it.each(CI_RUNS)(
    'seed $seed ($options.pool, $shuffle shuffle): correct output, nothing durable rerun',
    { timeout: 900_000 },
    async ({ seed, options }) => {
      workRoot ??= await makeTempDir('rebound-chaos-shuffle-ci-');
      for (const k of await runCiSeed(seed, options, workRoot, () => (failed = true))) injected.add(k);
    },
  );

  it('injected every remote-shuffle kind', () => {
    for (const k of SHUFFLE_KINDS) expect(injected.has(k), k).toBe(true);
  });
});
