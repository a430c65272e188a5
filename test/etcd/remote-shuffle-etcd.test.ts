import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '@rebound/ha/testing';
import { LocalCluster, suiteFailed } from '../harness.js';
import {
  HISTOGRAM_JOB,
  expectedHistogram,
  finishedInLog,
  finishedOf,
  firstRecoveryAfter,
  histogramArgs,
  readEventLog,
  subtaskKey,
  waitForLog,
  waitForNewLeader,
  histogramStarted,
} from '../recovery-util.js';
import { diffMaps, makeTempDir, readSinkOutput } from '../util.js';

const available = etcdAvailable();
if (!available && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );

/**
 * The product as a user deploys it for a long job: etcd HA, the remote shuffle, and running
 * tasks kept through a leader change (keep-running-tasks, on by default). A host dies: its
 * TaskManager and the leader are SIGKILLed together mid-job. Nothing finished runs again (the
 * partitions are on the shuffle worker), the tasks running on the other TaskManagers are adopted
 * in place, and only what ran on the dead TaskManager, or had not started, runs.
 */
describe.skipIf(!available)('remote shuffle and kept running tasks on etcd HA', () => {
  let etcd: EtcdCluster;
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1 });
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      // One slot each: the two middle subtasks run on two TaskManagers, one of which survives.
      slots: 1,
      shuffleWorkers: 1,
      config: {
        'high-availability.type': 'etcd',
        'high-availability.etcd.endpoints': etcd.endpointList,
        'high-availability.lease.timeout': '3 s',
        'high-availability.lease.renew-interval': '500 ms',
        'shuffle.type': 'remote',
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-etcd-remote-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    await etcd?.stopAll();
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('the leader and a TaskManager die together: nothing finished reruns, running tasks elsewhere are adopted', async () => {
    const records = 3000;
    const keys = 97;
    const out = join(data, 'host-dies');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, reduceDelayMs: 2 }),
      // A slow middle stage: it is running when the host dies.
      { config: { 'taskmanager.network.combiner.max-keys': '0' } },
    );
    const { source, middle } = await histogramStarted(cluster, jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    // The TaskManager that runs a middle subtask: its death costs that running task only. (Polling
    // until only one ran made the survivors empty, once in CI.)
    const running = await cluster.waitFor(
      async () => {
        const now = runningAt(await cluster.taskEvents(), jobId);
        // Every middle subtask: the one on the TaskManager that dies, and one that survives.
        // Its parallelism is decided once the sources finished: read it now, not at submission.
        const parallelism = (await cluster.status(jobId)).vertices[1]!.parallelism;
        const mid = now.filter((r) => r.vertexId === middle.id).length;
        return parallelism > 0 && mid === parallelism ? now : undefined;
      },
      30_000,
      'every middle subtask to run',
    );
    const leader = (await cluster.leader())!;
    const victim = running.find((r) => r.vertexId === middle.id)!.taskManagerId;
    await cluster.kill(leader.jobmasterId, 'SIGKILL');
    await cluster.kill(victim, 'SIGKILL');
    const atKill = finishedInLog(await readEventLog(cluster, jobId));

    await waitForNewLeader(cluster, leader.epoch);
    const restart = cluster.startJobMaster({ id: leader.jobmasterId });
    const final = await cluster.waitForJob(jobId, 120_000);
    await restart;
    expect(final.state).toBe('FINISHED');
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);

    const deploys = (await cluster.taskEvents()).filter((e) => e.jobId === jobId && e.event === 'task.deploy');
    const after = deploys.filter((e) => (e.epoch ?? 0) > leader.epoch).map((e) => subtaskKey(e.vertexId, e.subtask));
    // Nothing the log had finished ran again, wherever it ran (the dead TaskManager included).
    for (const k of atKill.keys()) expect(after).not.toContain(k);
    // What ran on a live TaskManager kept running; what ran on the dead one ran again.
    const survivors = running.filter((r) => r.taskManagerId !== victim);
    for (const r of survivors) expect(after).not.toContain(subtaskKey(r.vertexId, r.subtask));
    for (const r of running.filter((x) => x.taskManagerId === victim))
      expect(after).toContain(subtaskKey(r.vertexId, r.subtask));
    const report = firstRecoveryAfter(final.recoveries, leader.epoch);
    expect(report).toMatchObject({ restartedFromScratch: false, partitionsMissing: 0 });
    // Adopted running, or reported finished when it ended while there was no leader.
    expect(report!.runningTasksAdopted + report!.finishedTasksReported).toBe(survivors.length);
    expect(survivors.length).toBeGreaterThan(0);
    expect(report!.partitionsReusedOnShuffleWorkers).toBe(report!.partitionsReused);
    await cluster.startTaskManager({ id: victim });
  });
});

/** The job's subtasks whose last lifecycle event is a deploy (deployed, not ended). */
function runningAt(
  events: readonly { jobId: string; event: string; vertexId: string; subtask: number; taskManagerId: string }[],
  jobId: string,
): { vertexId: string; subtask: number; taskManagerId: string }[] {
  const last = new Map<string, (typeof events)[number]>();
  for (const e of events) if (e.jobId === jobId) last.set(subtaskKey(e.vertexId, e.subtask), e);
  return [...last.values()].filter((e) => e.event === 'task.deploy');
}
