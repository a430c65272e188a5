import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { faultKindsFor, planRun, type FaultKind, type RunPlanOptions } from '@rebound/chaos';
import { runCiSeed } from '../chaos-seeds.js';
import { REPO_ROOT } from '../harness.js';
import { makeTempDir } from '../util.js';

/**
 * The chaos harness in CI: a fixed handful of seeds that together inject every fault kind
 * (`npm run chaos` draws them at random; see packages/chaos/README.md). Each run starts its own
 * local cluster, injects its faults, and must end with the fault-free output, no lost or stuck
 * job, and no finished task rerun whose event was durable on a TaskManager that lived.
 */

function chaosCli(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts', 'chaos.ts'), ...args], {
      cwd: REPO_ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

describe('npm run chaos: bad input', () => {
  it.each([
    [
      ['--seed', '1', '--faults', 'leader-kill,meteor-strike'],
      /^chaos: unknown fault 'meteor-strike'; known faults: leader-kill, /,
    ],
    [['--seed', 'twelve'], /^chaos: --seed must be a non-negative integer, got 'twelve'$/],
    [
      ['--seed', '1', '--crash-point', 'before-event=JobFinished:1'],
      /^chaos: --crash-point before-event=JobFinished:1 can never trigger: there is no event type 'JobFinished'/,
    ],
  ])('%j: one clear line, exit code 2', async (args, line) => {
    const r = await chaosCli(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(line);
  });
});

interface CiRun {
  readonly seed: number;
  readonly options: RunPlanOptions;
}

/**
 * Together they inject every fault kind; seeds of runs with several faults were picked for early
 * triggers, so that every fault lands while the job still runs.
 */
const CI_RUNS: readonly CiRun[] = [
  {
    seed: 11,
    options: { pool: ['crash-point'], crashPoint: { kind: 'after-event', eventType: 'ExecutionVertexFinished', n: 3 } },
  },
  { seed: 12, options: { pool: ['double-failure'], job: 'join' } },
  // The run that found the SourceCoordinator's duplicate split after a restore from an older
  // snapshot (see packages/jobmaster/src/source-coordinator.regressions.test.ts).
  { seed: 12, options: { pool: ['jobmasters-pause'] } },
  {
    seed: 277,
    options: { pool: ['leader-kill', 'tm-kill-leaderless', 'partition-delete'], faultsPerRun: 3, job: 'wordcount' },
  },
  { seed: 78, options: { pool: ['tm-kill-after-recovery', 'leader-pause'], faultsPerRun: 2, job: 'wordcount' } },
  { seed: 199, options: { pool: ['torn-tail', 'flipped-byte'], faultsPerRun: 2, job: 'aggregation' } },
  // A hostile or careless user: damaged-job-dir first (its second job must finish before the
  // trigger), then forged calls and a poison job that throws at load (not one that hangs for the
  // 30 s load timeout). jobgraph.pb:zeros is the damage that decoded as an empty graph.
  { seed: 1514, options: { pool: ['poison-job', 'damaged-job-dir', 'forged-rpc'], faultsPerRun: 3, job: 'wordcount' } },
  // Malformed credentials at the leader's gRPC and REST and a TaskManager: refused, nobody hurt.
  { seed: 1, options: { pool: ['malformed-credentials'], job: 'wordcount' } },
  // A poison job whose operator coordinator loops endlessly on the JobMaster: its worker is ended
  // after the job's 2 s call timeout and only it fails; both JobMasters live on.
  { seed: 1, options: { pool: ['poison-runtime'], faultsPerRun: 1, job: 'wordcount' } },
  // A user operator coordinator (examples/unique-ids.ts, blocks of 10 ids, keep-running-tasks on):
  // the new leader restores it from its snapshot and must never hand out again an id that a kept
  // subtask, finished or running, holds. The only job no seed draws unless named.
  { seed: 12, options: { pool: ['leader-kill'], faultsPerRun: 1, job: 'unique-ids' } },
];

/** The kinds of a file-HA run without partitions; the etcd and network kinds run in test/etcd/chaos-etcd.test.ts. */
const FILE_KINDS = [
  ...faultKindsFor({ ha: 'file', partitions: false, shuffleWorkers: 0 }),
  // Drawn only when named (no default pool has them), so recorded seeds replay as before.
  'malformed-credentials' as const,
  'poison-runtime' as const,
];

describe('chaos harness: a fixed set of seeds covering every fault kind', () => {
  const injected = new Set<FaultKind>();
  let workRoot: string | undefined;
  let failed = false;

  afterAll(async () => {
    if (workRoot && !failed) await rm(workRoot, { recursive: true, force: true });
  });

  it('plans every fault kind', () => {
    const planned = new Set(CI_RUNS.flatMap((r) => planRun(r.seed, r.options).faults.map((f) => f.kind)));
    expect([...planned].sort()).toEqual([...FILE_KINDS].sort());
  });

  it.each(CI_RUNS)(
    'seed $seed ($options.pool): correct output, nothing durable rerun',
    { timeout: 900_000 },
    async ({ seed, options }) => {
      workRoot ??= await makeTempDir('rebound-chaos-ci-');
      for (const k of await runCiSeed(seed, options, workRoot, () => (failed = true))) injected.add(k);
    },
  );

  it('injected every fault kind', () => {
    expect([...injected].sort()).toEqual([...FILE_KINDS].sort());
  });
});
