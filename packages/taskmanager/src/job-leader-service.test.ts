import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { Configuration, bindServer, loadProto, shutdownServer, silentLogger, systemClock } from '@rebound/core';
import type { JobMasterGatewayHandlers } from '@rebound/core';
import { createHaServices } from '@rebound/ha';
import { JobLeaderService } from './job-leader-service.js';

/** A JobMaster that accepts registrations and, when `hang`, never answers a heartbeat. */
async function fakeJobMaster(
  epoch: number,
  hang: boolean,
  registered: (at: number) => void,
): Promise<{ server: grpc.Server; address: string }> {
  const server = new grpc.Server();
  const unused = (): never => {
    throw new Error('not part of the test');
  };
  const handlers: JobMasterGatewayHandlers = {
    RegisterTaskManager: (_call, cb) => {
      registered(Date.now());
      cb(null, { epoch, jobmaster_id: `jm-${epoch}`, heartbeat_interval_ms: 50, heartbeat_timeout_ms: 30_000 });
    },
    Heartbeat: (_call, cb) => {
      if (!hang) cb(null, { registered: true });
    },
    UpdateTaskExecutionState: unused,
    RequestSplit: unused,
    SendCoordinationRequest: unused,
    FetchJobArtifact: unused,
  };
  server.addService(loadProto().JobMasterGateway.service, handlers);
  const port = await bindServer(server, '127.0.0.1', 0);
  return { server, address: `127.0.0.1:${port}` };
}

describe('JobLeaderService', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const f of cleanup.splice(0).reverse()) await f();
  });

  it('switches to a new leader at once while a heartbeat to the old, hung one is in flight', async () => {
    const haDir = await mkdtemp(join(tmpdir(), 'rebound-jls-'));
    cleanup.push(() => rm(haDir, { recursive: true, force: true }));
    const writeLeader = (epoch: number, address: string) =>
      writeFile(
        join(haDir, 'leader.json'),
        JSON.stringify({ epoch, jobmasterId: `jm-${epoch}`, address, electedAtMs: Date.now() }),
      );
    let firstRegistered = 0;
    let secondRegistered = 0;
    const old = await fakeJobMaster(1, true, (t) => (firstRegistered ||= t));
    const next = await fakeJobMaster(2, false, (t) => (secondRegistered ||= t));
    cleanup.push(
      () => shutdownServer(old.server, 100),
      () => shutdownServer(next.server, 100),
    );
    await writeLeader(1, old.address);

    const lost: string[] = [];
    // rpc.timeout and heartbeat.timeout of 30 s: without the switch, the hung heartbeat holds it that long.
    const config = Configuration.of({
      'rpc.timeout': '30 s',
      'heartbeat.timeout': '30 s',
      'high-availability.lease.poll-interval': '50 ms',
    });
    const service = new JobLeaderService(
      {
        retrieval: createHaServices(config, haDir).createLeaderRetrievalService(silentLogger()),
        taskManagerId: 'tm-1',
        sessionId: 'session-1',
        address: '127.0.0.1:1',
        slots: 1,
        config,
        logger: silentLogger(),
        clock: systemClock,
        running: () => [],
        retainedJobs: () => [],
      },
      {
        onLeaderElected: () => undefined,
        onJobMasterConnected: () => undefined,
        onJobMasterLost: (epoch, reason) => void lost.push(`${epoch}: ${reason}`),
      },
    );
    service.start();
    cleanup.push(() => service.stop());
    await expect.poll(() => service.connectedEpoch(), { timeout: 5_000 }).toBe(1);
    // Heartbeats every 50 ms: one is now waiting on the hung JobMaster.
    await new Promise((r) => setTimeout(r, 200));
    const electedAt = Date.now();
    await writeLeader(2, next.address);
    await expect.poll(() => service.connectedEpoch(), { timeout: 5_000 }).toBe(2);
    expect(secondRegistered - electedAt).toBeLessThan(5_000);
    expect(lost).toEqual(['1: a new leader was elected (epoch 2)']);
  });

  it('registered with a JobMaster that answers a newer epoch than the record it followed, it keeps the registration when the record catches up', async () => {
    const haDir = await mkdtemp(join(tmpdir(), 'rebound-jls-'));
    cleanup.push(() => rm(haDir, { recursive: true, force: true }));
    const writeLeader = (epoch: number, address: string) =>
      writeFile(
        join(haDir, 'leader.json'),
        JSON.stringify({ epoch, jobmasterId: 'jm-1', address, electedAtMs: Date.now() }),
      );
    let registrations = 0;
    // The same JobMaster, elected again at epoch 13 while this TaskManager's record still says 2.
    const jm = await fakeJobMaster(13, false, () => void registrations++);
    cleanup.push(() => shutdownServer(jm.server, 100));
    await writeLeader(2, jm.address);
    const lost: string[] = [];
    const config = Configuration.of({
      'rpc.timeout': '5 s',
      'heartbeat.timeout': '30 s',
      'high-availability.lease.poll-interval': '50 ms',
    });
    const retrieval = createHaServices(config, haDir).createLeaderRetrievalService(silentLogger());
    const service = new JobLeaderService(
      {
        taskManagerId: 'tm-1',
        sessionId: 'session-1',
        address: '127.0.0.1:1',
        slots: 1,
        config,
        logger: silentLogger(),
        clock: systemClock,
        running: () => [],
        retainedJobs: () => [],
        retrieval,
      },
      {
        onLeaderElected: () => undefined,
        onJobMasterConnected: () => undefined,
        onJobMasterLost: (epoch, reason) => void lost.push(`${epoch}: ${reason}`),
      },
    );
    service.start();
    cleanup.push(() => service.stop());
    await expect.poll(() => service.connectedEpoch(), { timeout: 5_000 }).toBe(13);
    await writeLeader(13, jm.address);
    await expect.poll(() => retrieval.current()?.epoch, { timeout: 5_000 }).toBe(13);
    // One more step of the service after the record changed: it did not drop the registration.
    await expect.poll(() => registrations + (service.connectedEpoch() ?? 0), { timeout: 5_000 }).toBe(14);
    expect(service.connectedEpoch()).toBe(13);
    expect(lost).toEqual([]);
    expect(registrations).toBe(1);
  });
});
