/**
 * Hosts that are apart, etcd HA: a 3-member etcd cluster, two JobMasters and three TaskManagers,
 * every one of them in a network namespace of its own (etcd members too), so that etcd's clients
 * and peers, the RPCs and the partition reads all cross veths. Faults: a leader SIGKILLed, a
 * leader SIGSTOPped and resumed after a successor was elected, an etcd member killed, etcd cut off
 * from everyone for longer than the lease, every JobMaster restarted.
 * `npm run test:netns` (root only); see README "Hosts that are apart".
 */
import { ClusterSecurity, Configuration, ErrorCode, loadProto, unary } from '@rebound/core';
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
} from '../recovery-util.js';
import { diffMaps, readSinkOutput } from '../util.js';
import { NetnsCluster, sharedDir } from './cluster.js';
import { etcdUnavailableReason } from './etcd.js';
import { netnsUnavailableReason } from './network.js';
import { finishedNow, finishedRerun, partitionDirs, startedVertices } from './scenario-util.js';

const unavailable = netnsUnavailableReason() ?? etcdUnavailableReason();
if (unavailable) process.stderr.write(`netns etcd tests skipped: ${unavailable}\n`);

const RECORDS = 3000;
const KEYS = 97;
const SLOW_MIDDLE_JOB = { 'taskmanager.network.combiner.max-keys': '0' };
/** What a JobMaster logs when it stops leading, whatever the reason. */
const LOST_LEADERSHIP = /revok|lost leadership|leadership lost|lease lost|lease expired|keep-?alive/i;

describe.skipIf(unavailable !== undefined)('hosts that are apart (network namespaces), etcd HA', () => {
  let cluster: NetnsCluster;

  beforeAll(async () => {
    cluster = await NetnsCluster.start({
      etcdMembers: 3,
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        // FLIP-383's own rule, which these cases check across hosts: every unfinished subtask is
        // redeployed. Adopting running ones instead is test/keep-running's subject.
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '20 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
        'high-availability.lease.timeout': '2 s',
      },
    });
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
  });

  async function slowJob(name: string) {
    const out = sharedDir(cluster, name);
    const jobId = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 5 }),
      SLOW_MIDDLE_JOB,
    );
    const { source, middle } = await startedVertices(cluster, jobId);
    await cluster.waitFor(
      async () => finishedOf(await finishedNow(cluster, jobId), source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    return { jobId, out, source, middle };
  }

  async function expectExact(out: string): Promise<void> {
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
  }

  async function newLeaderAfter(epoch: number, timeoutMs = 60_000) {
    return cluster.waitFor(
      async () => {
        const l = await cluster.leader();
        return l && l.epoch > epoch ? l : undefined;
      },
      timeoutMs,
      `a leader of an epoch above ${epoch}`,
    );
  }

  /** Restarts every JobMaster that is not running (they come back as standbys or leader). */
  async function restartDeadJobMasters(): Promise<void> {
    for (const p of cluster.processes())
      if (p.role === 'jobmaster' && !cluster.isAlive(p.id)) await cluster.startDaemon('jobmaster', p.id);
  }

  it('c. leader SIGKILLed mid-job: the standby takes over through etcd; nothing finished runs again', async () => {
    const { jobId, out, source } = await slowJob('kill');
    const old = (await cluster.leader())!;
    expect(old.address.split(':')[0]).toBe(cluster.host(old.jobmasterId).ip);
    await cluster.kill(old.jobmasterId, 'SIGKILL');
    const atKill = await finishedNow(cluster, jobId);
    expect(finishedOf(atKill, source.id)).toHaveLength(source.parallelism);
    const next = await newLeaderAfter(old.epoch);
    expect(next.jobmasterId).not.toBe(old.jobmasterId);
    const final = await cluster.waitForJob(jobId, 120_000);
    await expectExact(out);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, old.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    expect(firstRecoveryAfter(final.recoveries, old.epoch)).toMatchObject({
      restartedFromScratch: false,
      executionsRecovered: atKill.size,
      partitionsMissing: 0,
    });
    await restartDeadJobMasters();
  });

  it('d. a SIGSTOPped leader resumed after a successor was elected: it steps down, its writes are refused by etcd, TaskManagers refuse its epoch', async () => {
    const { jobId, out } = await slowJob('pause');
    const old = (await cluster.leader())!;
    await cluster.kill(old.jobmasterId, 'SIGSTOP');
    let resumedAt = 0;
    try {
      const next = await newLeaderAfter(old.epoch);
      expect(next.jobmasterId).not.toBe(old.jobmasterId);
      // The successor has taken the job over and deployed before the old leader wakes up.
      await cluster.waitFor(
        async () => deploymentsAfter(await cluster.taskEvents(), jobId, old.epoch).length > 0,
        60_000,
        'the new leader to deploy',
      );
    } finally {
      resumedAt = Date.now();
      await cluster.kill(old.jobmasterId, 'SIGCONT');
    }
    await cluster.waitFor(
      async () => LOST_LEADERSHIP.test(await cluster.log(old.jobmasterId)),
      30_000,
      `${old.jobmasterId} to give leadership up after SIGCONT`,
    );
    await cluster.waitForJob(jobId, 120_000);
    await expectExact(out);
    // TaskManagers ran nothing for the old epoch after it woke up, and etcd still names the successor.
    const stale = (await cluster.taskEvents()).filter(
      (e) => e.event === 'task.deploy' && e.epoch === old.epoch && e.time >= resumedAt,
    );
    expect(stale).toEqual([]);
    expect((await cluster.leader())!.epoch).toBeGreaterThan(old.epoch);
    expect(cluster.isAlive(old.jobmasterId)).toBe(true);
    // A call in the old leader's name reaches every TaskManager over the bridge and is refused.
    const proto = loadProto();
    const security = ClusterSecurity.of(Configuration.of({ ...cluster.config }));
    for (const tm of cluster.processes().filter((p) => p.role === 'taskmanager')) {
      const client = new proto.TaskExecutorGateway(
        tm.address,
        security.channelCredentials(),
        security.channelOptions(),
      );
      try {
        const call = unary(
          client,
          client.CancelTask,
          { epoch: old.epoch, execution: { job_id: jobId, vertex_id: 'v', subtask: 0, attempt: 0 } },
          10_000,
        );
        await expect(call).rejects.toMatchObject({ code: ErrorCode.STALE_EPOCH });
      } finally {
        client.close();
      }
    }
    // A metadata write made with the old leader's epoch (what it would do had it not stepped
    // down) is refused by etcd: the guard compares the leader key's create revision.
    const ha = cluster.haServices();
    try {
      await expect(
        ha.leaderJobGraphStore(old.epoch).putJobAttachment(jobId, 'netns-stale-write', 'stale'),
      ).rejects.toThrow(/no longer leads|not.*leader/i);
      expect(await ha.jobGraphStore().getJobAttachment(jobId, 'netns-stale-write')).toBeUndefined();
    } finally {
      await ha.close();
    }
  });

  it("a partitioned leader's host (network only: etcd is across it) loses its lease; the standby finishes the job exactly", async () => {
    const { jobId, out, source } = await slowJob('leader-partition');
    const old = (await cluster.leader())!;
    const logBefore = (await cluster.log(old.jobmasterId)).length;
    cluster.partition(old.jobmasterId);
    let atTakeover;
    try {
      const next = await newLeaderAfter(old.epoch);
      expect(next.jobmasterId).not.toBe(old.jobmasterId);
      expect(cluster.isAlive(old.jobmasterId)).toBe(true);
      // Cut off from etcd, the old leader stepped down by itself (its keep-alives failed).
      await cluster.waitFor(
        async () => LOST_LEADERSHIP.test((await cluster.log(old.jobmasterId)).slice(logBefore)),
        30_000,
        `${old.jobmasterId} to step down`,
      );
      atTakeover = await finishedNow(cluster, jobId, old.epoch);
      expect(finishedOf(atTakeover, source.id)).toHaveLength(source.parallelism);
      const final = await cluster.waitForJob(jobId, 120_000);
      await expectExact(out);
      const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, old.epoch);
      expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atTakeover!.has(k)));
    } finally {
      cluster.heal(old.jobmasterId);
    }
    await cluster.waitForTaskManagers(['tm-1', 'tm-2', 'tm-3'], 30_000);
    expect((await cluster.leader())!.epoch).toBeGreaterThan(old.epoch);
  });

  it('e. one etcd member (the Raft leader) killed mid-job: the job finishes exactly, nothing finished runs again', async () => {
    const { jobId, out } = await slowJob('etcd-member');
    const epoch = (await cluster.leader())!.epoch;
    const before = await finishedNow(cluster, jobId, epoch);
    const victim = cluster.etcd!.raftLeader() ?? cluster.etcd!.members[0]!.name;
    await cluster.etcd!.kill(victim);
    try {
      await cluster.waitForJob(jobId, 120_000);
    } finally {
      await cluster.etcd!.restart(victim);
    }
    await expectExact(out);
    expect(finishedRerun(await cluster.taskEvents(), jobId, epoch, before)).toEqual([]);
    await restartDeadJobMasters();
  });

  it('f. etcd unavailable to everyone for longer than the lease: leadership lost, partitions kept, recovery when etcd returns', async () => {
    const { jobId, out, source } = await slowJob('etcd-outage');
    const old = (await cluster.leader())!;
    const logBefore = (await cluster.log(old.jobmasterId)).length;
    const kept = await partitionDirs(cluster, jobId);
    cluster.etcd!.partitionAll();
    try {
      await cluster.waitFor(
        async () => LOST_LEADERSHIP.test((await cluster.log(old.jobmasterId)).slice(logBefore)),
        60_000,
        `${old.jobmasterId} to lose leadership while etcd is unreachable`,
      );
    } finally {
      cluster.etcd!.healAll();
    }
    // The TaskManagers kept every partition through the outage.
    const afterOutage = await partitionDirs(cluster, jobId);
    expect(kept.filter((d) => !afterOutage.includes(d))).toEqual([]);
    const atOutage = await finishedNow(cluster, jobId, old.epoch);
    expect(finishedOf(atOutage, source.id)).toHaveLength(source.parallelism);
    await newLeaderAfter(old.epoch);
    const final = await cluster.waitForJob(jobId, 120_000);
    await expectExact(out);
    expect(finishedRerun(await cluster.taskEvents(), jobId, old.epoch, atOutage)).toEqual([]);
    expect(firstRecoveryAfter(final.recoveries, old.epoch)).toMatchObject({
      restartedFromScratch: false,
      partitionsMissing: 0,
    });
    expect(firstRecoveryAfter(final.recoveries, old.epoch)!.partitionsReused).toBeGreaterThanOrEqual(
      source.parallelism,
    );
    await restartDeadJobMasters();
  });

  it("g. a job's records survive a full restart of every JobMaster", async () => {
    const doneOut = sharedDir(cluster, 'before-restart');
    const done = await cluster.submit(HISTOGRAM_JOB, histogramArgs({ records: 500, keys: 31, output: doneOut }));
    await cluster.waitForJob(done, 60_000);
    const { jobId, out } = await slowJob('full-restart');
    const old = (await cluster.leader())!;
    const jms = cluster.processes().filter((p) => p.role === 'jobmaster' && cluster.isAlive(p.id));
    for (const p of jms) await cluster.kill(p.id, 'SIGKILL');
    const atKill = await finishedNow(cluster, jobId);
    await restartDeadJobMasters();
    await newLeaderAfter(old.epoch);
    expect((await cluster.status(done)).state).toBe('FINISHED');
    const final = await cluster.waitForJob(jobId, 120_000);
    await expectExact(out);
    expect(diffMaps(expectedHistogram(500, 31), await readSinkOutput(doneOut))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, old.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
  });
});
