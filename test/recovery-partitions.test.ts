import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import {
  HISTOGRAM_JOB,
  MIDDLE_PARALLELISM,
  allSubtasks,
  deletePartitionData,
  deploymentsAfter,
  expectedHistogram,
  finishedInLog,
  finishedOf,
  firstRecoveryAfter,
  histogramArgs,
  killAllJobMasters,
  partitionName,
  partitionsOnDisk,
  readEventLog,
  redeployedSubtasks,
  resumeStandbys,
  subtaskKey,
  waitForLog,
  waitForNewLeader,
  type FinishedExecution,
  histogramStarted,
} from './recovery-util.js';
import { diffMaps, makeTempDir, readSinkOutput } from './util.js';

const RECORDS = 3000;
const KEYS = 97;
/** Makes stage 2 of the histogram slow (see test/fixtures/histogram.ts). */
const SLOW_MIDDLE = { 'taskmanager.network.combiner.max-keys': '0' };

/**
 * Batch job recovery when partitions the old leader's tasks produced are lost: with their
 * TaskManager while no leader exists, deleted from disk after the new leader reused them, or
 * released by a TaskManager that waited too long for a new leader. Each test leaves the cluster
 * without a leader (standby frozen, leader SIGKILLed), loses partitions, then lets the standby
 * take over; the killed JobMaster comes back as the next standby.
 */
describe('batch job recovery with lost partitions', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        // FLIP-383's rules: running tasks fail with their leader and rerun. With kept running
        // tasks (the default) a middle stage that finishes without a leader needs no lost
        // partition again; that is tested in keep-running-tasks.test.ts.
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-recovery-');
  });

  /** JobMasters a test froze; thawed after it whatever happened, so that `local down` can stop them. */
  let frozen: string[] = [];
  /** The killed JobMaster being started again as the next standby. */
  let restarting: Promise<unknown> | undefined;

  afterEach(async () => {
    await resumeStandbys(cluster, frozen).catch(() => undefined);
    frozen = [];
    await restarting?.catch(() => undefined);
    restarting = undefined;
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  async function vertices(jobId: string) {
    return histogramStarted(cluster, jobId);
  }

  /**
   * Submits the histogram with a slow middle stage and, once every source finished, leaves the
   * cluster without a leader.
   */
  async function killWhileMiddleRuns(
    name: string,
    opts: { source?: 'sequence' | 'legacy'; config?: Record<string, string>; splits?: number } = {},
  ) {
    const out = join(data, name);
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({
        records: RECORDS,
        keys: KEYS,
        output: out,
        reduceDelayMs: 2,
        ...(opts.source ? { source: opts.source } : {}),
        ...(opts.splits ? { splits: opts.splits, parallelism: opts.splits } : {}),
      }),
      { config: { ...SLOW_MIDDLE, ...opts.config } },
    );
    const { source, middle } = await vertices(jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    const all = await killAllJobMasters(cluster);
    frozen = all.frozen;
    const killed = all.killed;
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    expect(finishedOf(atKill, middle.id).length).toBeLessThan(MIDDLE_PARALLELISM);
    return { jobId, out, source, middle, killed, atKill, sources: finishedOf(atKill, source.id) };
  }

  /** Lets a standby take over; the killed JobMaster is started again as the next standby. */
  async function bringBackLeader(killed: { id: string; epoch: number }): Promise<{ id: string; epoch: number }> {
    await resumeStandbys(cluster, frozen);
    frozen = [];
    const leader = await waitForNewLeader(cluster, killed.epoch);
    restarting = cluster.startJobMaster({ id: killed.id });
    return leader;
  }

  /** Waits until the new leader finished reconciling and runs the job. */
  async function waitForRecovered(jobId: string, killedEpoch: number): Promise<void> {
    await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        return st.leaderEpoch > killedEpoch && st.state === 'RUNNING' && st.recoveries.length > 0;
      },
      30_000,
      'the new leader to recover the job',
    );
  }

  it('reruns only the producers whose TaskManager died while no leader existed', async () => {
    const { jobId, out, killed, atKill, sources } = await killWhileMiddleRuns('tm-lost', {
      config: { 'execution.batch.job-recovery.previous-worker.recovery.timeout': '2 s' },
    });
    const perTm = new Map<string, FinishedExecution[]>();
    for (const f of sources) perTm.set(f.taskManagerId, [...(perTm.get(f.taskManagerId) ?? []), f]);
    expect(perTm.size).toBeGreaterThanOrEqual(2);
    const victim = [...perTm.keys()].sort()[0]!;
    await cluster.kill(victim, 'SIGKILL');

    await bringBackLeader(killed);
    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    const lost = [...atKill.values()].filter((f) => f.taskManagerId === victim);
    expect(lost.length).toBeGreaterThan(0);
    // Everything unfinished, plus the finished producers whose output died with the TaskManager.
    const expected = allSubtasks(final.vertices).filter(
      (k) => !atKill.has(k) || atKill.get(k)!.taskManagerId === victim,
    );
    expect(redeployedSubtasks(redeployed)).toEqual(expected);
    for (const f of lost) {
      expect(redeployed.find((e) => e.vertexId === f.vertexId && e.subtask === f.subtask)?.attempt).toBe(f.attempt + 1);
    }
    expect(redeployed.some((e) => e.taskManagerId === victim)).toBe(false);
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({
      partitionsMissing: lost.length,
      partitionsReused: atKill.size - lost.length,
    });
  });

  it('reruns each reused producer whose partition data is gone when read, one failover each', async () => {
    const { jobId, out, source, killed, sources } = await killWhileMiddleRuns('pnf-twice');
    expect(sources).toHaveLength(4);
    // The data goes while no leader exists, but the TaskManager still reports the partitions
    // (it lists what it finished, not what is on disk): the new leader reuses them, and the
    // middle stage, which was unfinished and so reruns whole, must read both. Nothing depends on
    // how far a reader got or in which order it reads.
    const [s2, s3] = [sources[2]!, sources[3]!];
    await deletePartitionData(cluster, jobId, partitionName(s3));
    await deletePartitionData(cluster, jobId, partitionName(s2));
    const leader = await bringBackLeader(killed);
    await waitForRecovered(jobId, killed.epoch);
    expect(firstRecoveryAfter((await cluster.status(jobId)).recoveries, killed.epoch)).toMatchObject({
      partitionsReused: 4,
      partitionsMissing: 0,
    });

    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    const sourceDeploys = redeployed.filter((e) => e.vertexId === source.id);
    expect(sourceDeploys.map((e) => [e.subtask, e.attempt]).sort()).toEqual([
      [2, s2.attempt + 1],
      [3, s3.attempt + 1],
    ]);
    expect(final.restarts).toBeGreaterThanOrEqual(2);
    const log = await cluster.log(leader.id);
    for (const s of [s2, s3])
      expect(log).toContain(`"partition":"${jobId}/${source.id}#${s.subtask}.${s.attempt}@${s.attemptEpoch}"`);
  });

  it('reruns every subtask of a finished source without batch snapshots when one of its partitions is lost after recovery', async () => {
    const { jobId, out, source, killed, sources } = await killWhileMiddleRuns('pnf-legacy', { source: 'legacy' });
    expect(sources).toHaveLength(4);
    // Gone before the new leader exists, still reported: read (and found missing) by the rerun middle stage whatever its order.
    await deletePartitionData(cluster, jobId, partitionName(sources[3]!));
    await bringBackLeader(killed);
    await waitForRecovered(jobId, killed.epoch);

    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    const sourceDeploys = redeployed.filter((e) => e.vertexId === source.id);
    expect(sourceDeploys.map((e) => subtaskKey(e.vertexId, e.subtask)).sort()).toEqual(allSubtasks([source]));
    for (const f of sources) expect(sourceDeploys.find((e) => e.subtask === f.subtask)?.attempt).toBe(f.attempt + 1);
    expect(final.restarts).toBeGreaterThan(0);
  });

  it('a TaskManager releases retained partitions when no leader takes them within taskmanager.registration.timeout', async () => {
    // One TaskManager that waits only 2 s for a new leader; the others wait the default 5 min.
    const impatient = await cluster.startTaskManager({ config: { 'taskmanager.registration.timeout': '2 s' } });
    // As many source subtasks as slots, all free: every TaskManager, the impatient one included,
    // runs sources, whatever order the scheduler picks slots in.
    const overview = await cluster.waitFor(
      async () => {
        const o = await cluster.overview();
        return o.task_managers.some((t) => t.task_manager_id === impatient.id) &&
          o.task_managers.every((t) => t.slots_free === t.slots_total)
          ? o
          : undefined;
      },
      30_000,
      'every slot to be free',
    );
    const slots = overview.task_managers.reduce((n, t) => n + t.slots_total, 0);
    const { jobId, out, killed, atKill, sources } = await killWhileMiddleRuns('registration-timeout', {
      config: { 'execution.batch.job-recovery.previous-worker.recovery.timeout': '2 s' },
      splits: slots,
    });
    const onImpatient = [...atKill.values()].filter((f) => f.taskManagerId === impatient.id);
    expect(onImpatient.length).toBeGreaterThan(0);
    expect(sources.some((f) => f.taskManagerId !== impatient.id)).toBe(true);

    await cluster.waitFor(
      async () =>
        (await partitionsOnDisk(cluster, jobId)).every((p) => p.taskManagerId !== impatient.id) &&
        (await cluster.log(impatient.id)).includes('no leader took the retained partitions in time; released them'),
      20_000,
      `${impatient.id} to release its retained partitions`,
    );
    // The patient TaskManagers still keep theirs.
    const kept = (await partitionsOnDisk(cluster, jobId)).map((p) => p.name);
    for (const f of atKill.values()) {
      if (f.taskManagerId !== impatient.id) expect(kept).toContain(partitionName(f));
    }

    await bringBackLeader(killed);
    const final = await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    const expected = allSubtasks(final.vertices).filter(
      (k) => !atKill.has(k) || atKill.get(k)!.taskManagerId === impatient.id,
    );
    expect(redeployedSubtasks(redeployed)).toEqual(expected);
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({ partitionsMissing: onImpatient.length });
  });
});
