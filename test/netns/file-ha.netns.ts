/**
 * Hosts that are apart, file HA: two JobMasters and three TaskManagers, each in a network
 * namespace of its own, every RPC and partition read over a veth. Faults are network partitions
 * (packets dropped), not kills: the partitioned process keeps running and comes back on heal.
 * `npm run test:netns` (root only); see README "Hosts that are apart".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteFailed } from '../harness.js';
import {
  HISTOGRAM_JOB,
  allSubtasks,
  deploymentsAfter,
  expectedHistogram,
  finishedOf,
  firstRecoveryAfter,
  histogramArgs,
  redeployedSubtasks,
  subtaskKey,
} from '../recovery-util.js';
import { diffMaps, readSinkOutput } from '../util.js';
import { NetnsCluster, sharedDir } from './cluster.js';
import { netnsUnavailableReason } from './network.js';
import { finishedNow as finishedAt, runningSubtask, startedVertices as started } from './scenario-util.js';

const unavailable = netnsUnavailableReason();
if (unavailable) process.stderr.write(`netns tests skipped: ${unavailable}\n`);

const RECORDS = 3000;
const KEYS = 97;
/** Stage 2 of the histogram blocks 5 ms per record: each of its subtasks runs for seconds. */
const SLOW_MIDDLE_JOB = { 'taskmanager.network.combiner.max-keys': '0' };

describe.skipIf(unavailable !== undefined)('hosts that are apart (network namespaces), file HA', () => {
  let cluster: NetnsCluster;

  beforeAll(async () => {
    cluster = await NetnsCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      // These two bind 0.0.0.0 in their namespace and advertise its address (jobmaster.rpc.address, taskmanager.host).
      wildcardBind: ['jm-2', 'tm-3'],
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        // FLIP-383's own rule, which these cases check across hosts: every unfinished subtask is
        // redeployed. Adopting running ones instead is test/keep-running's subject.
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
  });

  const finishedNow = (jobId: string, maxEpoch?: number) => finishedAt(cluster, jobId, maxEpoch);
  const startedVertices = (jobId: string) => started(cluster, jobId);

  it('every daemon serves on its own host address, and a job reads partitions across hosts', async () => {
    const ips = new Set<string>();
    for (const p of cluster.processes()) {
      expect(p.address.split(':')[0]).toBe(p.host.ip);
      expect(p.host.ip.startsWith(`${cluster.net.subnet}.`)).toBe(true);
      ips.add(p.host.ip);
    }
    expect(ips.size).toBe(5);
    const leader = (await cluster.leader())!;
    expect(leader.address.split(':')[0]).toBe(cluster.host(leader.jobmasterId).ip);
    const registered = (await cluster.overview()).task_managers.map((t) => t.address.split(':')[0]).sort();
    expect(registered).toEqual(['tm-1', 'tm-2', 'tm-3'].map((id) => cluster.host(id).ip).sort());

    const out = sharedDir(cluster, 'plain');
    const jobId = await cluster.submit(HISTOGRAM_JOB, histogramArgs({ records: 500, keys: 31, output: out }));
    await cluster.waitForJob(jobId, 60_000);
    expect(diffMaps(expectedHistogram(500, 31), await readSinkOutput(out))).toEqual([]);
    // Consumers ran on more than one host: some partition reads crossed the bridge.
    const hostsUsed = new Set(
      (await cluster.taskEvents())
        .filter((e) => e.jobId === jobId && e.event === 'task.deploy')
        .map((e) => e.taskManagerId),
    );
    expect(hostsUsed.size).toBeGreaterThan(1);
  });

  it('a partitioned leader (network and its view of the HA directory) is replaced by the standby; the job finishes exactly', async () => {
    const out = sharedDir(cluster, 'leader-partition');
    const jobId = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 5 }),
      SLOW_MIDDLE_JOB,
    );
    const { source, middle } = await startedVertices(jobId);
    await cluster.waitFor(
      async () => finishedOf(await finishedNow(jobId), source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    const old = (await cluster.leader())!;
    const standby = cluster.processes().find((p) => p.role === 'jobmaster' && p.id !== old.jobmasterId)!;

    cluster.partition(old.jobmasterId, { storage: true });
    try {
      const next = await cluster.waitFor(
        async () => {
          const l = await cluster.leader();
          return l && l.epoch > old.epoch ? l : undefined;
        },
        30_000,
        `a leader of an epoch above ${old.epoch}`,
      );
      expect(next.jobmasterId).toBe(standby.id);
      expect(next.address.split(':')[0]).toBe(standby.host.ip);
      // The partitioned leader is alive: this was a partition, not a crash.
      expect(cluster.isAlive(old.jobmasterId)).toBe(true);
      const atTakeover = await finishedNow(jobId, old.epoch);
      expect(finishedOf(atTakeover, source.id)).toHaveLength(source.parallelism);

      const final = await cluster.waitForJob(jobId, 120_000);
      // The middle's parallelism is decided once the sources finished: read it from the end state,
      // not from the start (startedVertices may see it still undecided, 0).
      const middleParallelism = final.vertices.find((v) => v.id === middle.id)!.parallelism;
      expect(finishedOf(atTakeover, middle.id).length).toBeLessThan(middleParallelism);
      expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
      // No finished task ran again: only what the log did not have finished was deployed anew.
      const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, old.epoch);
      expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atTakeover.has(k)));
      expect(firstRecoveryAfter(final.recoveries, old.epoch)).toMatchObject({
        restartedFromScratch: false,
        executionsRecovered: atTakeover.size,
        partitionsMissing: 0,
      });
    } finally {
      cluster.heal(old.jobmasterId);
    }
    // Healed, the old leader knows it lost the lease and stands by; the TaskManagers stay with the new one.
    await cluster.waitFor(
      async () => /lease lost|lost leadership|revok/i.test(await cluster.log(old.jobmasterId)),
      30_000,
      `${old.jobmasterId} to log that it lost leadership`,
    );
    expect(cluster.isAlive(old.jobmasterId)).toBe(true);
    expect((await cluster.leader())!.jobmasterId).toBe(standby.id);
    await cluster.waitForTaskManagers(['tm-1', 'tm-2', 'tm-3'], 30_000);
  });

  /*
   * keep-running-tasks across hosts (the cluster runs with it off; this job turns it on): the
   * leader's host is cut off while the middle stage runs on the TaskManagers' hosts. They keep
   * those tasks through the loss of their leader, and the standby adopts them where they run.
   */
  it('a partitioned leader while the middle stage runs: the standby adopts its running tasks in place; nothing reruns, output exact', async () => {
    const out = sharedDir(cluster, 'leader-partition-keep-running');
    const jobId = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 5 }),
      { ...SLOW_MIDDLE_JOB, 'execution.batch.job-recovery.keep-running-tasks': 'true' },
    );
    const { source, middle } = await startedVertices(jobId);
    await cluster.waitFor(
      async () => {
        const events = await cluster.taskEvents();
        return events.some((e) => e.jobId === jobId && e.event === 'task.deploy' && e.vertexId === middle.id);
      },
      30_000,
      'the middle stage to run',
    );
    const old = (await cluster.leader())!;
    cluster.partition(old.jobmasterId, { storage: true });
    try {
      await cluster.waitFor(
        async () => {
          const l = await cluster.leader();
          return l && l.epoch > old.epoch ? l : undefined;
        },
        30_000,
        `a leader of an epoch above ${old.epoch}`,
      );
      const final = await cluster.waitForJob(jobId, 120_000);
      expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
      const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId && e.event === 'task.deploy');
      const byOld = redeployedSubtasks(events.filter((e) => (e.epoch ?? 0) <= old.epoch));
      const byNew = redeployedSubtasks(events.filter((e) => (e.epoch ?? 0) > old.epoch));
      // Everything the old leader started, running or finished, was kept: none of it ran again.
      expect(byNew.filter((k) => byOld.includes(k))).toEqual([]);
      expect(byOld.filter((k) => k.startsWith(`${source.id}#`))).toHaveLength(source.parallelism);
      const report = firstRecoveryAfter(final.recoveries, old.epoch)!;
      expect(report).toMatchObject({ restartedFromScratch: false, partitionsMissing: 0 });
      // Middle subtasks running at the cut are adopted, or finished while no leader led.
      expect(report.runningTasksAdopted + report.finishedTasksReported).toBeGreaterThan(0);
    } finally {
      cluster.heal(old.jobmasterId);
    }
    await cluster.waitForTaskManagers(['tm-1', 'tm-2', 'tm-3'], 30_000);
  });

  it('a partitioned TaskManager: its work is redone elsewhere, finished work kept elsewhere is not, output exact', async () => {
    const out = sharedDir(cluster, 'tm-partition');
    const jobId = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 5 }),
      SLOW_MIDDLE_JOB,
    );
    const { source, middle } = await startedVertices(jobId);
    await cluster.waitFor(
      async () => finishedOf(await finishedNow(jobId), source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    // A TaskManager that runs a subtask of the slow middle stage right now.
    const running = await runningSubtask(cluster, jobId, middle.id, 'a middle subtask to be running');
    const victim = running.taskManagerId;
    const before = await finishedNow(jobId);
    const partitionedAt = Date.now();
    cluster.net.partition(cluster.host(victim));
    try {
      await cluster.waitForJob(jobId, 120_000);
    } finally {
      cluster.heal(victim);
    }
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const after = (await cluster.taskEvents()).filter(
      (e) => e.jobId === jobId && e.event === 'task.deploy' && e.time >= partitionedAt,
    );
    // The partitioned host ran nothing more; the middle subtask it ran was redone elsewhere.
    expect(after.filter((e) => e.taskManagerId === victim)).toEqual([]);
    expect(after.some((e) => e.vertexId === middle.id && e.subtask === running.subtask)).toBe(true);
    // A finished subtask ran again only if its output was on the partitioned host.
    for (const e of after) {
      const f = before.get(subtaskKey(e.vertexId, e.subtask));
      if (f)
        expect({ rerun: subtaskKey(e.vertexId, e.subtask), outputOn: f.taskManagerId }).toEqual({
          rerun: subtaskKey(e.vertexId, e.subtask),
          outputOn: victim,
        });
    }
    // Healed, the TaskManager registers with the leader again.
    await cluster.waitForTaskManagers(['tm-1', 'tm-2', 'tm-3'], 30_000);
  });
});
