import { rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EtcdCluster, etcdAvailable, startEtcdCluster } from '@rebound/ha/testing';
import { LocalCluster, runRebound, suiteFailed } from '../harness.js';
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
  killLeader,
  readEventLog,
  redeployedSubtasks,
  waitForLog,
  waitForNewLeader,
  histogramStarted,
} from '../recovery-util.js';
import { http } from '../rest-util.js';
import { diffMaps, makeTempDir, readSinkOutput } from '../util.js';

const available = etcdAvailable();
if (!available && process.env.CI)
  throw new Error(
    'etcd is not installed: put an etcd 3.4+ binary at /usr/bin/etcd or name it in REBOUND_ETCD_BIN (the etcd tests must run in CI)',
  );

/**
 * A local cluster with `high-availability.type=etcd` against a real etcd: the CLI finds the leader
 * through etcd, and a job survives the leader's SIGKILL with exact output and no finished subtask
 * run again.
 */
describe.skipIf(!available)('a local cluster on etcd', () => {
  let etcd: EtcdCluster;
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    etcd = await startEtcdCluster({ members: 1 });
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: {
        'high-availability.type': 'etcd',
        'high-availability.etcd.endpoints': etcd.endpointList,
        // etcd leases count in seconds; a loaded 2-core machine needs slack for keep-alives.
        'high-availability.lease.timeout': '3 s',
        'high-availability.lease.renew-interval': '500 ms',
        'execution.batch.job-recovery.enabled': 'true',
        // FLIP-383's own rule, which the SIGKILL case checks on etcd HA: every unfinished subtask
        // is redeployed. Adopting running ones instead is test/keep-running's subject.
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-etcd-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    await etcd?.stopAll();
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('the CLI finds the leader through etcd, and there is no leader.json', async () => {
    const leader = await cluster.leader();
    expect(leader).toBeDefined();
    const r = await cluster.rebound(['leader', '--json', '--cluster', cluster.workdir]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: leader!.jobmasterId, epoch: leader!.epoch, serving: true });
    const status = await cluster.rebound(['local', 'status']);
    expect(status.stdout).toContain(`leader   ${leader!.jobmasterId} (epoch ${leader!.epoch})`);
    await expect(stat(join(cluster.haDir, 'leader.json'))).rejects.toThrow(/ENOENT/);
    // Endpoints live in etcd too: the dashboard's view of the cluster comes from there.
    await expect(stat(join(cluster.haDir, 'endpoints'))).rejects.toThrow(/ENOENT/);
    const jm = (await cluster.processes()).find((p) => p.id === leader!.jobmasterId);
    expect(jm?.restUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const view = await http<{
      jobmasters: { id: string; restUrl: string | null; alive: boolean | null }[];
      taskmanagers: { id: string; alive: boolean | null }[];
    }>(`${jm!.restUrl}/cluster`, {
      headers: cluster.security().httpHeaders(),
    });
    expect(view.status).toBe(200);
    expect(view.body.jobmasters.map((j) => [j.id, j.alive, j.restUrl !== null])).toEqual([
      ['jm-1', true, true],
      ['jm-2', true, true],
    ]);
    expect(view.body.taskmanagers.map((t) => [t.id, t.alive])).toEqual([
      ['tm-1', true],
      ['tm-2', true],
      ['tm-3', true],
    ]);
    // `local kill-leader` asks etcd who leads, and waits there for the standby that takes over
    // once the lease expires.
    const kill = await cluster.rebound(['local', 'kill-leader', '--json']);
    expect(kill.code, kill.stderr).toBe(0);
    const killed = JSON.parse(kill.stdout) as { id: string; epoch: number; next: { id: string; epoch: number } };
    expect(killed).toMatchObject({ id: leader!.jobmasterId, epoch: leader!.epoch });
    const next = await waitForNewLeader(cluster, leader!.epoch);
    expect(next.id).not.toBe(leader!.jobmasterId);
    expect(killed.next).toMatchObject(next);
    await cluster.startJobMaster({ id: leader!.jobmasterId });
  });

  it('runs a job through a leader SIGKILL: exact output, no finished subtask run again', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'middle');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, reduceDelayMs: 2 }),
      {
        config: { 'taskmanager.network.combiner.max-keys': '0' },
      },
    );
    const { source, middle } = await histogramStarted(cluster, jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    const killedAt = Date.now();
    const killed = await killLeader(cluster);
    const before = { jobmasterId: killed.id, epoch: killed.epoch };
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    // The scenario: all sources done, the middle stage still running.
    expect(finishedOf(atKill, source.id)).toHaveLength(source.parallelism);
    expect(finishedOf(atKill, middle.id).length).toBeLessThan(MIDDLE_PARALLELISM);

    const next = await waitForNewLeader(cluster, before.epoch);
    expect(next.id).not.toBe(before.jobmasterId);
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(final.state).toBe('FINISHED');
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, before.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    const recovery = firstRecoveryAfter(final.recoveries, before.epoch);
    expect(recovery).toMatchObject({ restartedFromScratch: false, executionsRecovered: atKill.size });
    // The new leader saw the old one's key expire and dates its loss from the lease, not from the
    // newest event (which is older: the job was quiet, mid-stage, when the leader died).
    expect(recovery!.oldLeaderLastHeardMs).toBeGreaterThanOrEqual(killedAt - 3_000);
    expect(recovery!.oldLeaderLastHeardMs).toBeLessThanOrEqual(recovery!.electedAtMs);

    // `rebound events` reads the event log from storageDir.
    const ev = await cluster.rebound(['events', jobId]);
    expect(ev.code).toBe(0);
    expect(ev.stdout).toContain('ExecutionVertexFinished');
  });

  it('says in one line which endpoints to fix when etcd is unreachable', async () => {
    const workdir = await makeTempDir('rebound-it-etcd-down-');
    try {
      const r = await runRebound([
        'local',
        'up',
        '--workdir',
        workdir,
        '--jobmasters',
        '1',
        '--taskmanagers',
        '1',
        '--timeout',
        '30 s',
        '-D',
        'high-availability.type=etcd',
        '-D',
        'high-availability.etcd.endpoints=http://127.0.0.1:1',
        '-D',
        'high-availability.etcd.request-timeout=1 s',
      ]);
      expect(r.code).not.toBe(0);
      const lines = r.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/http:\/\/127\.0\.0\.1:1.*high-availability\.etcd\.endpoints/);
    } finally {
      await rm(workdir, { recursive: true, force: true });
    }
  });
});
