import { mkdtemp, open, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Configuration, bindServer, decodeMessage, encodeMessage, handleUnary, loadProto, shutdownServer, silentLogger, systemClock } from '@rebound/core';
import type { JobGraph__Output, TaskDeploymentDescriptor__Output, TaskExecutorGatewayHandlers } from '@rebound/core';
import { buildJob, defineJob } from '@rebound/api';
import { FileSystemJobEventStore, JobEventManager, jobEventsDir } from '@rebound/event-store';
import { JobMaster } from './job-master.js';
import { TaskManagerRegistry } from './task-manager-registry.js';

/**
 * Regressions found by the chaos harness (packages/chaos), named after the fault that found them.
 */

const JOB_ID = 'fedcba9876543210fedcba9876543210';

async function fakeTaskManager(deployed: TaskDeploymentDescriptor__Output[]): Promise<{ address: string; close(): Promise<void> }> {
  const handlers: TaskExecutorGatewayHandlers = {
    DeployTask: handleUnary((tdd) => {
      deployed.push(tdd);
      return { accepted: true };
    }),
    CancelTask: handleUnary(() => ({ found: true })),
    ReleasePartitions: handleUnary((r) => ({ released: r.partitions.length })),
    GetAndRetainPartitionsWithMetrics: handleUnary(() => ({ partitions: [] })),
    DisconnectJob: handleUnary(() => ({})),
  };
  const server = new grpc.Server();
  server.addService(loadProto().TaskExecutorGateway.service, handlers);
  const port = await bindServer(server, '127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, close: () => shutdownServer(server, 100) };
}

async function until(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('JobMaster regressions', () => {
  let haDir: string;
  let out: string;
  let deployed: TaskDeploymentDescriptor__Output[];
  let tm: { address: string; close(): Promise<void> };
  const registries: TaskManagerRegistry[] = [];
  let leaderEpoch = 1;

  beforeEach(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rebound-jm-regr-'));
    haDir = join(dir, 'ha');
    out = join(dir, 'out');
    deployed = [];
    tm = await fakeTaskManager(deployed);
  });

  afterEach(async () => {
    for (const r of registries.splice(0)) r.close();
    await tm.close();
  });

  async function jobMaster(epoch: number): Promise<{ job: JobMaster; events: JobEventManager }> {
    const def = defineJob('seq-sum', (env) => {
      env
        .generateSequence(0, 99, { splitSize: 25 })
        .map((n) => [n % 3, n] as [number, number])
        .keyBy((t) => t[0])
        .sum(1)
        .writeAsText(out);
    });
    const built = await buildJob(def, []);
    const graph = decodeMessage<JobGraph__Output>('JobGraph', encodeMessage('JobGraph', { ...built.graph, job_id: JOB_ID, module_digest: '0'.repeat(64) }));
    const config = Configuration.of({ 'heartbeat.timeout': '1 min', 'execution.batch.job-recovery.previous-worker.recovery.timeout': '0 ms' });
    const registry = new TaskManagerRegistry(epoch, `jm-${epoch}`, config, { onTaskManagerRegistered: () => {}, onTaskManagerLost: () => {} }, silentLogger(), systemClock);
    registries.push(registry);
    registry.register({ task_manager_id: 'tm-1', address: tm.address, slots: 8, epoch, jobs_with_retained_partitions: [] });
    const events = new JobEventManager(
      new FileSystemJobEventStore({ haDir, jobId: JOB_ID, epoch, jobMasterId: `jm-${epoch}`, currentLeaderEpoch: () => leaderEpoch, flushIntervalMs: 10 }),
      systemClock,
    );
    const job = new JobMaster(graph, built.operators, {
      epoch,
      jobmasterId: `jm-${epoch}`,
      address: '127.0.0.1:1',
      config,
      registry,
      logger: silentLogger(),
      clock: systemClock,
      events,
      electedAtMs: Date.now(),
      recoveries: [],
      saveRecoveries: async () => {},
      saveCommitManifest: async () => {},
      onTerminal: async () => {},
      onSlotsFreed: () => job.schedule(),
    });
    return { job, events };
  }

  /*
   * flipped-byte (chaos seed 1005): the harness flipped a bit in the file header of the only event
   * file. Its checksum failed, so the reader dropped the whole file as a torn tail and the new
   * leader replayed no event at all, yet counted the job as recovered and never initialized its
   * source: the first schedule() treated the source as a consumer and threw "Cannot read
   * properties of undefined (reading 'consumers')" out of every TaskManager registration, and the
   * job stayed RUNNING with nothing deployed, forever.
   */
  it('flipped-byte: a takeover that replays no event still initializes and deploys the sources', async () => {
    const first = await jobMaster(1);
    await first.job.start();
    await until(() => deployed.length === 4, 'the first leader to deploy the sources');
    await first.events.flush();
    await first.job.suspend();

    // Damage the file header (after the 8-byte prefix): its checksum fails, the file reads as torn at 0.
    const dir = jobEventsDir(haDir, JOB_ID);
    const [file] = (await readdir(dir)).filter((n) => n.startsWith('events.'));
    const fh = await open(join(dir, file!), 'r+');
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, 10);
    b[0] = b[0]! ^ 0x40;
    await fh.write(b, 0, 1, 10);
    await fh.close();

    leaderEpoch = 2;
    deployed.length = 0;
    const second = await jobMaster(2);
    await second.job.start(true);
    expect(second.job.state).toBe('RUNNING');
    await until(() => deployed.length === 4, 'the new leader to deploy the sources');
    expect(new Set(deployed.map((d) => `${d.execution!.vertex_id}#${d.execution!.subtask}`)).size).toBe(4);
    expect(deployed.every((d) => d.epoch === 2)).toBe(true);
    await second.job.cancel();
  });

  it('flipped-byte: a scheduling error fails the job loudly instead of escaping from schedule()', async () => {
    const { job } = await jobMaster(1);
    await job.start();
    await until(() => deployed.length === 4, 'source deployments');
    // Break the graph the way the missing initialization did: a source vertex that looks uninitialized.
    const source = job.graph.vertices[0]!;
    Object.defineProperty(source, 'isInitialized', { value: false });
    expect(() => job.schedule()).not.toThrow();
    await until(() => job.state === 'FAILED', 'the job to fail');
    expect(job.failure).toMatch(/^scheduling failed: /);
  });
});
