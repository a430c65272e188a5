import { rm } from 'node:fs/promises';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ETCD_FAULTS,
  PARTITION_FAULTS,
  cleanupPartitionsSync,
  partitionsUnavailableReason,
  planRun,
  sweepStalePartitions,
  type FaultKind,
  type RunPlanOptions,
} from '@rebound/chaos';
import { etcdAvailable } from '@rebound/ha/testing';
import { runCiSeed } from '../chaos-seeds.js';
import { makeTempDir } from '../util.js';

/**
 * The chaos harness on etcd HA (`npm run chaos -- --ha etcd [--partitions]`): each run starts a
 * 3-member etcd of its own, and the etcd and network faults must leave the job's output exact and
 * every durable finished task on a TaskManager that lived unrun (except where a heartbeat timeout
 * during a cut cost a TaskManager its registration: packages/chaos/README.md, "The heartbeat excuse"). Partition runs need root, nft and cgroup v2; .ci/run provides them.
 */

const etcd = etcdAvailable();
if (!etcd && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );
const noPartitions = etcd ? partitionsUnavailableReason() : 'no etcd';
if (noPartitions && etcd) console.warn(`chaos on etcd: the partition runs are skipped: ${noPartitions}`);

interface EtcdRun {
  readonly seed: number;
  readonly options: RunPlanOptions & { readonly pool: readonly FaultKind[] };
}

/** Seeds whose first trigger is early (1-2 finished tasks), so that every fault lands mid-job. */
const KILL_RUNS: readonly EtcdRun[] = [
  // The Raft leader member SIGKILLed for good; then the other two SIGSTOPped past the lease and SIGCONTed.
  { seed: 16, options: { pool: ['etcd-member-kill', 'etcd-outage'], faultsPerRun: 2, job: 'wordcount', ha: 'etcd' } },
  // Every member SIGSTOPped past the lease and SIGCONTed; then a follower SIGKILLed and restarted.
  { seed: 26, options: { pool: ['etcd-member-kill', 'etcd-outage'], faultsPerRun: 2, job: 'wordcount', ha: 'etcd' } },
];

/**
 * Every member SIGKILLed past the lease and restarted (etcd-outage in 'kill' mode). It found a
 * bug: after the outage a TaskManager registered with the re-elected leader under the stale epoch
 * its broken etcd watch still held, kept that epoch although the JobMaster answered with its own,
 * then took the late watch event for "a new leader was elected", registered again, and the
 * JobMaster reset the finished tasks on it. Fixed in job-leader-service.ts (the answer's epoch is
 * adopted) and the etcd leader retrieval (the key is read while the watch is down).
 */
const OUTAGE_RUN: EtcdRun = {
  seed: 5,
  options: { pool: ['etcd-member-kill', 'etcd-outage'], faultsPerRun: 2, job: 'wordcount', ha: 'etcd' },
};
const PARTITION_RUNS: readonly EtcdRun[] = [
  // Long cuts: etcd's Raft leader, the leading JobMaster (loses its lease), a TaskManager beyond heartbeat.timeout.
  {
    seed: 6,
    options: {
      pool: ['tm-partition', 'leader-partition', 'etcd-leader-partition'],
      faultsPerRun: 3,
      job: 'wordcount',
      ha: 'etcd',
      partitions: true,
    },
  },
  // Short cuts: a TaskManager within heartbeat.timeout (nothing durable may rerun), etcd's Raft leader.
  {
    seed: 2,
    options: {
      pool: ['tm-partition', 'leader-partition', 'etcd-leader-partition'],
      faultsPerRun: 3,
      job: 'wordcount',
      ha: 'etcd',
      partitions: true,
    },
  },
];

describe.skipIf(!etcd)('chaos harness on etcd HA', () => {
  const injected = new Set<FaultKind>();
  let workRoot: string | undefined;
  let failed = false;

  afterAll(async () => {
    cleanupPartitionsSync();
    if (workRoot && !failed) await rm(workRoot, { recursive: true, force: true });
  });

  async function runSeed({ seed, options }: EtcdRun): Promise<void> {
    workRoot ??= await makeTempDir('rebound-chaos-etcd-');
    if (options.partitions) sweepStalePartitions();
    expect(planRun(seed, options).ha).toBe('etcd');
    const kinds = await runCiSeed(seed, options, workRoot, () => (failed = true));
    for (const k of kinds) injected.add(k);
  }

  it.each(KILL_RUNS)('seed $seed ($options.pool): etcd members killed and stopped', { timeout: 900_000 }, (r) =>
    runSeed(r),
  );

  it('seed 5: every etcd member SIGKILLed past the lease, then restarted (see OUTAGE_RUN)', { timeout: 900_000 }, () =>
    runSeed(OUTAGE_RUN),
  );

  it.skipIf(noPartitions !== undefined).each(PARTITION_RUNS)(
    'seed $seed ($options.pool): network cuts',
    { timeout: 900_000 },
    (r) => runSeed(r),
  );

  it('injected every etcd kind (and every partition kind where partitions are possible)', () => {
    const want = [...ETCD_FAULTS, ...PARTITION_FAULTS].filter(
      (k) => noPartitions === undefined || !PARTITION_FAULTS.has(k),
    );
    expect([...injected].sort()).toEqual([...new Set(want)].sort());
  });
});
