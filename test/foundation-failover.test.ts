import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localStatusReport } from '@rebound/cli';
import {
  CHANNEL_OPTIONS,
  ErrorCode,
  ReboundError,
  loadProto,
  unary,
  type ClusterSecurity,
  type TaskExecutorGatewayClient,
} from '@rebound/core';
import type { LeaderInfo } from '@rebound/ha';
import { expectedNumbered } from './fixtures/numbered-source.js';
import { LocalCluster, suiteFailed } from './harness.js';
import { diffMaps, makeTempDir, readSinkOutput } from './util.js';

/** A fence rejection logged by a TaskManager (`event: "fence.reject"`). */
interface FenceReject {
  readonly taskManagerId: string;
  readonly method: string;
  readonly epoch: number;
  readonly time: number;
}

function parseFenceRejects(log: string, taskManagerId: string): FenceReject[] {
  const out: FenceReject[] = [];
  for (const line of log.split('\n')) {
    if (!line.includes('"fence.reject"')) continue;
    const o = JSON.parse(line) as { method?: string; epoch?: number; time?: number };
    out.push({ taskManagerId, method: String(o.method), epoch: Number(o.epoch), time: Number(o.time) });
  }
  return out;
}

/** Calls every TaskExecutorGateway method that changes state, as a deposed leader of `epoch` would. */
async function callAsStaleLeader(
  address: string,
  epoch: number,
  security: ClusterSecurity,
): Promise<Record<string, string>> {
  const Ctor = loadProto().TaskExecutorGateway;
  // With the cluster secret: what is tested here is the epoch fence, not authentication.
  const client: TaskExecutorGatewayClient = new Ctor(
    address,
    security.channelCredentials(),
    security.channelOptions(CHANNEL_OPTIONS),
  );
  // A job id no real job has: should the fence let a call through, no real work is harmed.
  const execution = { job_id: 'ffffffffffffffffffffffffffffffff', vertex_id: 'v-probe', subtask: 0, attempt: 0 };
  const outcome = async (p: Promise<unknown>): Promise<string> =>
    p.then(
      () => 'ACCEPTED',
      (err: unknown) => (err instanceof ReboundError ? err.code : String(err)),
    );
  try {
    return {
      DeployTask: await outcome(
        unary(client, client.DeployTask, { epoch, execution, vertex_name: 'probe', parallelism: 1 }, 5_000),
      ),
      CancelTask: await outcome(unary(client, client.CancelTask, { epoch, execution }, 5_000)),
      ReleasePartitions: await outcome(unary(client, client.ReleasePartitions, { epoch, partitions: [] }, 5_000)),
      DisconnectJob: await outcome(
        unary(client, client.DisconnectJob, { epoch, job_id: execution.job_id, release_partitions: true }, 5_000),
      ),
    };
  } finally {
    client.close();
  }
}

/** Leader election and epoch fencing (issue 2) against real, signalled JobMaster processes. */
describe('JobMaster failover and fencing', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 2, taskmanagers: 3, slots: 2 });
    data = await makeTempDir('rebound-it-fencing-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('fences a SIGSTOPped leader that wakes up after a standby took over; it steps down and the job finishes correctly', async () => {
    const out = join(data, 'fenced');
    const splits = 8;
    const records = 40;
    // Two readers of four 1-second splits each: 3 of 6 slots stay free, so one TaskManager gets no
    // task of the new leader and learns the new epoch only by registering with it.
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      String(splits),
      '--records',
      String(records),
      '--delay-ms',
      '25',
      '--parallelism',
      '2',
      '--output',
      out,
    ]);
    const old = (await cluster.leader())!;
    await cluster.waitFor(
      async () =>
        (await cluster.taskEvents()).filter(
          (e) => e.jobId === jobId && e.event === 'task.deploy' && e.epoch === old.epoch,
        ).length >= 2,
      30_000,
      'the leader to deploy the source tasks',
    );

    await cluster.kill(old.jobmasterId, 'SIGSTOP');
    let next: LeaderInfo;
    const probes: Record<string, Record<string, string>> = {};
    let resumedAt = 0;
    try {
      next = await cluster.waitFor(
        async () => {
          const l = await cluster.leader();
          return l && l.epoch > old.epoch ? l : undefined;
        },
        // A deadline against a hang, not a takeover-time bound (that is a figure: bench/recovery).
        30_000,
        'a standby to take over',
        { intervalMs: 20 },
      );
      expect(next.jobmasterId).not.toBe(old.jobmasterId);
      // Every TaskManager registers with the new leader, which runs the job again (no recovery).
      await cluster.waitFor(
        async () => {
          const o = await cluster.overview();
          return o.epoch === next.epoch && o.task_managers.length === 3;
        },
        15_000,
        'all TaskManagers to register with the new leader',
      );
      await cluster.waitFor(
        async () =>
          (await cluster.taskEvents()).some(
            (e) => e.jobId === jobId && e.event === 'task.deploy' && e.epoch === next.epoch,
          ),
        15_000,
        'the new leader to deploy the job',
      );
      // Whatever the old leader might send now, every TaskManager refuses it.
      for (const tm of (await cluster.processes()).filter((p) => p.role === 'taskmanager')) {
        probes[tm.id] = await callAsStaleLeader(tm.address, old.epoch, cluster.security());
      }
    } finally {
      // Taken before the signal: the stopped process cannot log anything earlier than this.
      resumedAt = Date.now();
      await cluster.kill(old.jobmasterId, 'SIGCONT');
    }
    for (const [tm, outcome] of Object.entries(probes)) {
      expect(outcome, `calls with epoch ${old.epoch} to ${tm}`).toEqual({
        DeployTask: ErrorCode.STALE_EPOCH,
        CancelTask: ErrorCode.STALE_EPOCH,
        ReleasePartitions: ErrorCode.STALE_EPOCH,
        DisconnectJob: ErrorCode.STALE_EPOCH,
      });
    }

    // The woken leader notices it lost the lease and steps down; it stays up as a standby.
    await cluster.waitFor(
      async () =>
        (await cluster.log(old.jobmasterId))
          .split('\n')
          .some(
            (l) => l.includes('"leadership revoked"') && Number((JSON.parse(l) as { time: number }).time) >= resumedAt,
          ),
      10_000,
      `${old.jobmasterId} to step down after SIGCONT`,
    );
    const report = await localStatusReport(cluster.workdir);
    expect(report.leader?.epoch).toBe(next.epoch);
    expect(report.processes.find((p) => p.id === old.jobmasterId)).toMatchObject({ alive: true, leader: false });
    expect(report.processes.find((p) => p.id === next.jobmasterId)).toMatchObject({ alive: true, leader: true });

    const final = await cluster.waitForJob(jobId, 60_000);
    expect(final.leaderEpoch).toBe(next.epoch);
    expect(diffMaps(expectedNumbered(splits, records), await readSinkOutput(out, String))).toEqual([]);

    // In the TaskManager logs: once the new epoch appeared, nothing ran under the old one.
    const events = await cluster.taskEvents();
    const firstNew = Math.min(...events.filter((e) => e.epoch === next.epoch).map((e) => e.time));
    // (Tasks of the old epoch failed by themselves when their TaskManager lost the old leader: a
    // cancel of one would have come from the old leader.)
    const lateOld = events.filter(
      (e) => e.epoch === old.epoch && (e.event === 'task.deploy' || e.event === 'task.cancel') && e.time >= firstNew,
    );
    expect(lateOld, 'deployments or cancels of the old epoch after the new one appeared').toEqual([]);
    const rejects = (
      await Promise.all(
        (await cluster.processes())
          .filter((p) => p.role === 'taskmanager')
          .map(async (p) => parseFenceRejects(await cluster.log(p.id), p.id)),
      )
    ).flat();
    // Our probes (and anything the old leader tried) were rejected and logged as such.
    expect(rejects.filter((r) => r.epoch === old.epoch).length).toBeGreaterThanOrEqual(4 * 3);
    expect(rejects.every((r) => r.epoch < next.epoch)).toBe(true);
  });

  it('a standby leads after the leader is SIGKILLed, and the TaskManagers follow it', async () => {
    const before = (await cluster.leader())!;
    await cluster.kill(before.jobmasterId, 'SIGKILL');
    const after = await cluster.waitFor(
      async () => {
        const l = await cluster.leader();
        return l && l.epoch > before.epoch ? l : undefined;
      },
      30_000,
      'a standby to take over after SIGKILL',
      { intervalMs: 20 },
    );
    expect(after.jobmasterId).not.toBe(before.jobmasterId);
    // The TaskManagers follow it.
    await cluster.waitFor(
      async () => {
        const o = await cluster.overview();
        return o.epoch === after.epoch && o.task_managers.length === 3;
      },
      15_000,
      'the TaskManagers to register with the new leader',
    );
  });
});
