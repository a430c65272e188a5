import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import {
  HISTOGRAM_JOB,
  MIDDLE_PARALLELISM,
  allSubtasks,
  deploymentsAfter,
  expectedHistogram,
  finishedInLog,
  finishedOf,
  firstRecoveryAfter,
  histogramArgs,
  killAllJobMasters,
  partitionName,
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

/** The finished partitions (with an index) of `jobId` on each shuffle worker's disk, by worker id. */
async function partitionsOnWorkers(cluster: LocalCluster, jobId: string): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  for (const p of await cluster.processes()) {
    if (p.role !== 'shuffle-worker' || !p.dataDir) continue;
    const dir = join(p.dataDir, 'partitions', jobId);
    const names = await readdir(dir).catch(() => [] as string[]);
    const finished = await Promise.all(
      names.map(async (n) => ((await stat(join(dir, n, 'index')).catch(() => undefined)) ? n : undefined)),
    );
    out.set(p.id, finished.filter((n): n is string => n !== undefined).sort());
  }
  return out;
}

/**
 * The remote shuffle (issue 22, scenarios a–d): finished partitions live on shuffle workers, so a
 * TaskManager that dies, alone or with the leader, costs only its running tasks; a worker that
 * dies costs the producers whose partitions only it held; a worker restarted while there is no
 * leader is found again with its partitions. Running tasks fail with their leader here (FLIP-383's
 * rules), so what reruns after a leader kill is exactly what was unfinished plus what was lost.
 */
describe('remote shuffle: finished work outlives its TaskManager', () => {
  let cluster: LocalCluster;
  let data: string;
  let frozen: string[] = [];
  let restarting: Promise<unknown> | undefined;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      shuffleWorkers: 2,
      config: {
        'shuffle.type': 'remote',
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-remote-shuffle-');
  });

  afterEach(async () => {
    await resumeStandbys(cluster, frozen).catch(() => undefined);
    frozen = [];
    await restarting?.catch(() => undefined);
    restarting = undefined;
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
  });

  async function submitSlowHistogram(name: string, config: Record<string, string> = {}) {
    const out = join(data, name);
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 2 }),
      { config: { ...SLOW_MIDDLE, ...config } },
    );
    const { source, middle } = await histogramStarted(cluster, jobId);
    const atSourcesDone = await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    return { jobId, out, source, middle, sources: finishedOf(atSourcesDone, source.id) };
  }

  async function bringBackLeader(killed: { id: string; epoch: number }): Promise<void> {
    await resumeStandbys(cluster, frozen);
    frozen = [];
    await waitForNewLeader(cluster, killed.epoch);
    restarting = cluster.startJobMaster({ id: killed.id });
  }

  /** The TaskManager that ran the most finished sources (it must have run one at least). */
  function busiest(sources: readonly FinishedExecution[]): string {
    const perTm = new Map<string, number>();
    for (const f of sources) perTm.set(f.taskManagerId, (perTm.get(f.taskManagerId) ?? 0) + 1);
    return [...perTm].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]![0];
  }

  it('(a) the leader and a TaskManager that ran finished producers die together: nothing finished reruns', async () => {
    const { jobId, out, middle, sources } = await submitSlowHistogram('leader-and-tm');
    const all = await killAllJobMasters(cluster);
    frozen = all.frozen;
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    expect(finishedOf(atKill, middle.id).length).toBeLessThan(MIDDLE_PARALLELISM);
    const victim = busiest(sources);
    await cluster.kill(victim, 'SIGKILL');

    await bringBackLeader(all.killed);
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    // Only what had not finished ran again: the dead TaskManager's finished sources did not.
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, all.killed.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    const report = firstRecoveryAfter(final.recoveries, all.killed.epoch);
    expect(report).toMatchObject({
      partitionsMissing: 0,
      partitionsReused: sources.length,
      partitionsReusedOnShuffleWorkers: sources.length,
    });
    const status = await cluster.rebound(['status', jobId]);
    expect(status.stdout).toContain(`(${sources.length} kept on shuffle workers)`);
    await cluster.startTaskManager({ id: victim });
  });

  it('(b) a TaskManager alone dies mid-job: only its running tasks run again', async () => {
    const { jobId, out, source, sources } = await submitSlowHistogram('tm-alone');
    const victim = busiest(sources);
    const killedAt = Date.now();
    await cluster.kill(victim, 'SIGKILL');
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId && e.event === 'task.deploy');
    // Every source ran once: the dead TaskManager's finished ones were read from the workers.
    expect(events.filter((e) => e.vertexId === source.id).map((e) => e.attempt)).toEqual(
      new Array<number>(source.parallelism).fill(0),
    );
    // What ran again had been running on the dead TaskManager.
    const rerun = events.filter((e) => e.attempt > 0);
    for (const e of rerun) {
      const first = events.find((d) => d.vertexId === e.vertexId && d.subtask === e.subtask && d.attempt === 0);
      expect(first?.taskManagerId).toBe(victim);
      expect(e.time).toBeGreaterThanOrEqual(killedAt - 1000);
    }
    expect(final.state).toBe('FINISHED');
    await cluster.startTaskManager({ id: victim });
  });

  for (const replicas of [1, 2]) {
    it(`(c) a shuffle worker dies with ${replicas} replica(s): ${replicas === 1 ? 'only the producers it kept' : 'nothing'} run again`, async () => {
      const { jobId, out, source, middle } = await submitSlowHistogram(`worker-kill-${replicas}`, {
        'shuffle.remote.replicas': String(replicas),
      });
      const placed = await partitionsOnWorkers(cluster, jobId);
      const victim = [...placed].sort((a, b) => b[1].length - a[1].length)[0]![0];
      const onVictim = new Set(placed.get(victim));
      const atKill = finishedInLog(await readEventLog(cluster, jobId));
      expect(finishedOf(atKill, middle.id).length).toBeLessThan(MIDDLE_PARALLELISM);
      await cluster.kill(victim, 'SIGKILL');
      const final = await cluster.waitForJob(jobId, 90_000);
      expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
      const rerunSources = (await cluster.taskEvents())
        .filter((e) => e.jobId === jobId && e.event === 'task.deploy' && e.vertexId === source.id && e.attempt > 0)
        .map((e) => subtaskKey(e.vertexId, e.subtask));
      const expected =
        replicas === 1
          ? finishedOf(atKill, source.id)
              .filter((f) => onVictim.has(partitionName(f)))
              .map((f) => subtaskKey(f.vertexId, f.subtask))
          : [];
      if (replicas === 1) expect(expected.length).toBeGreaterThan(0);
      expect([...new Set(rerunSources)].sort()).toEqual(expected.sort());
      expect(final.state).toBe('FINISHED');
      await cluster.startShuffleWorker({ id: victim });
    });
  }

  it('(e) the new leader stops waiting once the only worker of the missing partitions is known dead', async () => {
    const { jobId, out, source } = await submitSlowHistogram('worker-dead-no-leader', {
      'execution.batch.job-recovery.previous-worker.recovery.timeout': '60 s',
    });
    const all = await killAllJobMasters(cluster);
    frozen = all.frozen;
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    const placed = await partitionsOnWorkers(cluster, jobId);
    const victim = [...placed].sort((a, b) => b[1].length - a[1].length)[0]![0];
    const lost = finishedOf(atKill, source.id).filter((f) => placed.get(victim)!.includes(partitionName(f)));
    expect(lost.length).toBeGreaterThan(0);
    await cluster.kill(victim, 'SIGKILL');
    await bringBackLeader(all.killed);
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const report = firstRecoveryAfter(final.recoveries, all.killed.epoch);
    // Not the 60 s timeout: the dead worker's endpoint says it will not come back.
    expect(report).toMatchObject({ reconnectWaitEnded: 'holders-settled', partitionsMissing: lost.length });
    expect(report!.reconnectWaitMs).toBeLessThan(30_000);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, all.killed.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(
      allSubtasks(final.vertices).filter(
        (k) => !atKill.has(k) || lost.some((f) => subtaskKey(f.vertexId, f.subtask) === k),
      ),
    );
    await cluster.startShuffleWorker({ id: victim });
  });

  it('(d) a shuffle worker restarted while there is no leader is found again with its partitions', async () => {
    const { jobId, out, sources } = await submitSlowHistogram('worker-restart');
    const all = await killAllJobMasters(cluster);
    frozen = all.frozen;
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    const before = await partitionsOnWorkers(cluster, jobId);
    for (const id of before.keys()) {
      await cluster.kill(id, 'SIGKILL');
      // No leader to register with: it comes up and waits for one.
      await cluster.startShuffleWorker({ id, wait: false });
    }
    expect(await partitionsOnWorkers(cluster, jobId)).toEqual(before);
    await bringBackLeader(all.killed);
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, all.killed.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    expect(firstRecoveryAfter(final.recoveries, all.killed.epoch)).toMatchObject({
      partitionsMissing: 0,
      partitionsReusedOnShuffleWorkers: sources.length,
    });
  });
});
