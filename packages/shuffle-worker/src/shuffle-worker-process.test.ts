import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CHANNEL_OPTIONS,
  Configuration,
  ErrorCode,
  HealthServices,
  bindServer,
  checkHealth,
  loadProto,
  shutdownServer,
  silentLogger,
  unary,
  type RegisterShuffleWorkerRequest__Output,
  type ShuffleMasterGatewayHandlers,
  type ShuffleWorkerHeartbeatRequest__Output,
  type ResultPartitionId,
  type ShuffleWorkerServiceClient,
} from '@rebound/core';
import { createHaServices } from '@rebound/ha';
import {
  PartitionClientPool,
  ShuffleWorkerClientPool,
  createRemotePartitionWriter,
  readRemoteSubpartitions,
} from '@rebound/partition';
import { capabilityFile } from './job-read-capabilities.js';
import { startShuffleWorkerProcess, type ShuffleWorkerProcess } from './shuffle-worker-process.js';

/** A leading JobMaster's ShuffleMasterGateway, as far as a worker can tell. */
interface FakeLeader {
  readonly epoch: number;
  readonly address: string;
  readonly registrations: RegisterShuffleWorkerRequest__Output[];
  readonly heartbeats: ShuffleWorkerHeartbeatRequest__Output[];
  /** Whether a heartbeat finds the worker registered (false: a leader that forgot it). */
  knows: boolean;
  liveJobs: string[];
  close(): Promise<void>;
}

async function fakeLeader(epoch: number): Promise<FakeLeader> {
  const server = new grpc.Server();
  const leader: Omit<FakeLeader, 'address' | 'close'> = {
    epoch,
    registrations: [],
    heartbeats: [],
    knows: true,
    liveJobs: [],
  };
  const handlers: ShuffleMasterGatewayHandlers = {
    RegisterShuffleWorker: (call, cb) => {
      leader.registrations.push(call.request);
      leader.knows = true;
      cb(null, { epoch, jobmaster_id: `jm-${epoch}`, heartbeat_interval_ms: 30, heartbeat_timeout_ms: 10_000 });
    },
    ShuffleWorkerHeartbeat: (call, cb) => {
      leader.heartbeats.push(call.request);
      cb(null, leader.knows ? { registered: true, epoch, live_jobs: leader.liveJobs } : { registered: false, epoch });
    },
  };
  server.addService(loadProto().ShuffleMasterGateway.service, handlers);
  const port = await bindServer(server, '127.0.0.1', 0);
  return Object.assign(leader, { address: `127.0.0.1:${port}`, close: () => shutdownServer(server, 100) });
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});
afterAll(() => {
  writers.close();
  readers.close();
});

let haDir: string;
let dataDir: string;
beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-sw-ha-'));
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-sw-data-'));
  cleanup.push(() => rm(haDir, { recursive: true, force: true }));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
});

const writeLeader = (l: FakeLeader) =>
  writeFile(
    join(haDir, 'leader.json'),
    JSON.stringify({ epoch: l.epoch, jobmasterId: `jm-${l.epoch}`, address: l.address, electedAtMs: Date.now() }),
  );

const config = Configuration.of({
  'rpc.timeout': '5 s',
  'high-availability.lease.poll-interval': '30 ms',
  'shuffle-worker.metrics.port': '0',
});

async function startWorker(
  id = 'sw-1',
  options: { config?: Configuration; clock?: { now(): number } } = {},
): Promise<{ proc: ShuffleWorkerProcess; client: ShuffleWorkerServiceClient }> {
  const proc = await startShuffleWorkerProcess({
    id,
    dataDir,
    haDir,
    config: options.config ?? config,
    logger: silentLogger(),
    ...(options.clock ? { clock: options.clock } : {}),
  });
  const client = new (loadProto().ShuffleWorkerService)(
    proc.address,
    grpc.credentials.createInsecure(),
    CHANNEL_OPTIONS,
  );
  let closed = false;
  const close = proc.close;
  const wrapped: ShuffleWorkerProcess = {
    ...proc,
    close: async () => {
      if (closed) return;
      closed = true;
      client.close();
      await close();
    },
  };
  cleanup.push(() => wrapped.close());
  return { proc: wrapped, client };
}

const writers = new ShuffleWorkerClientPool();
const readers = new PartitionClientPool();

function pid(job: string, subtask = 0): ResultPartitionId {
  return { job_id: job, vertex_id: 'map', subtask, attempt: 0, epoch: 1 };
}

/** A producer writing one partition to the worker, as a TaskManager with remote shuffle does. */
async function writePartition(address: string, id: ResultPartitionId, capability: string, records: string[][]) {
  const w = createRemotePartitionWriter(id, records.length, [{ worker_id: 'sw-1', address }], {
    clients: writers,
    readCapability: capability,
    timeoutMs: 5_000,
  });
  records.forEach((recs, s) => recs.forEach((r) => w.emit(s, r)));
  return w.finish();
}

async function read(address: string, id: ResultPartitionId, capability: string, end: number): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of readRemoteSubpartitions(readers.get(address), id, 0, end, {
    timeoutMs: 5_000,
    readCapability: capability,
  }))
    out.push(...batch);
  return out;
}

const list = (client: ShuffleWorkerServiceClient, epoch: number, session: string, job = 'job-1') =>
  unary(client, client.ListPartitions, { epoch, job_id: job, session_id: session }, 5_000);

describe('startShuffleWorkerProcess', () => {
  it('registers with the leader it finds in the HA services, then sends heartbeats at the interval it returned', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    const { proc } = await startWorker();
    await expect.poll(() => leader.heartbeats.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(3);
    expect(leader.registrations).toHaveLength(1);
    const reg = leader.registrations[0]!;
    expect(reg).toMatchObject({ worker_id: 'sw-1', address: proc.address, epoch: 1, jobs_with_partitions: [] });
    expect(reg.session_id).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(leader.heartbeats[0]).toMatchObject({ worker_id: 'sw-1', epoch: 1, session_id: reg.session_id });
    expect(await checkHealth(proc.address, HealthServices.shuffleWorker, 5_000)).toBe('SERVING');
    // The endpoint is published for the leader's directory of workers.
    const ep = await createHaServices(config, haDir).endpoints().read('sw-1');
    expect(ep).toMatchObject({ role: 'shuffle-worker', address: proc.address });
    expect(ep?.metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('registers again when a heartbeat answer says the leader does not know it', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    await startWorker();
    await expect.poll(() => leader.heartbeats.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    leader.knows = false;
    await expect.poll(() => leader.registrations.length, { timeout: 5_000 }).toBe(2);
    // The same process keeps its session.
    expect(leader.registrations[1]!.session_id).toBe(leader.registrations[0]!.session_id);
    const after = leader.heartbeats.length;
    await expect.poll(() => leader.heartbeats.length, { timeout: 5_000 }).toBeGreaterThan(after + 1);
  });

  it('registers with a new leader, fences the old one out, and requires its own session', async () => {
    const first = await fakeLeader(1);
    const second = await fakeLeader(2);
    cleanup.push(
      () => first.close(),
      () => second.close(),
    );
    await writeLeader(first);
    const { client } = await startWorker();
    await expect.poll(() => first.registrations.length, { timeout: 5_000 }).toBe(1);
    const session = first.registrations[0]!.session_id;
    expect((await list(client, 1, session)).partitions).toEqual([]);
    await expect(list(client, 1, 'not-the-session')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    await expect(list(client, 5, session)).rejects.toMatchObject({ code: ErrorCode.EPOCH_UNCONFIRMED });

    await writeLeader(second);
    await expect.poll(() => second.registrations.length, { timeout: 5_000 }).toBe(1);
    expect(second.registrations[0]).toMatchObject({ epoch: 2, session_id: session });
    await expect(list(client, 1, session)).rejects.toMatchObject({ code: ErrorCode.STALE_EPOCH });
    await expect(
      unary(client, client.ReleaseJob, { epoch: 1, job_id: 'job-1', session_id: session }, 5_000),
    ).rejects.toMatchObject({ code: ErrorCode.STALE_EPOCH });
    expect((await list(client, 2, session)).partitions).toEqual([]);
    const beats = first.heartbeats.length;
    await expect.poll(() => second.heartbeats.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    expect(first.heartbeats.length).toBe(beats);
  });

  it('keeps trying while no leader answers, and registers once one does', async () => {
    const gone = await fakeLeader(1);
    await writeLeader(gone);
    await gone.close();
    const { proc } = await startWorker();
    // A leader record whose JobMaster is dead: the worker serves on, unregistered, and retries.
    const metricsUrl = (await createHaServices(config, haDir).endpoints().read('sw-1'))!.metricsUrl!;
    const retries = async () => {
      const text = await (await fetch(`${metricsUrl}/metrics`)).text();
      return Number(/^rebound_shuffle_worker_registration_retries_total\{[^}]*\} (\d+)$/m.exec(text)?.[1] ?? 0);
    };
    await expect.poll(retries, { timeout: 5_000 }).toBeGreaterThanOrEqual(2);
    expect(await checkHealth(proc.address, HealthServices.shuffleWorker, 5_000)).toBe('NOT_SERVING');
    expect(await checkHealth(proc.address, HealthServices.server, 5_000)).toBe('SERVING');
    const next = await fakeLeader(2);
    cleanup.push(() => next.close());
    await writeLeader(next);
    await expect.poll(() => next.heartbeats.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
  });

  it('stops every loop on close(): no call reaches the leader afterwards', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    const { proc } = await startWorker();
    await expect.poll(() => leader.heartbeats.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(1);
    await proc.close();
    const calls = leader.heartbeats.length + leader.registrations.length;
    await new Promise((r) => setTimeout(r, 200));
    expect(leader.heartbeats.length + leader.registrations.length).toBe(calls);
    expect(await createHaServices(config, haDir).endpoints().read('sw-1')).toBeUndefined();
  });

  it('takes partitions over WritePartition, reports them in heartbeats and lists them for the leader', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    const { proc, client } = await startWorker();
    await expect.poll(() => leader.registrations.length, { timeout: 5_000 }).toBe(1);
    const session = leader.registrations[0]!.session_id;
    const written = await writePartition(proc.address, pid('job-1'), 'cap-1', [['a', 'b'], ['c']]);
    expect(written.workers.map((w) => w.worker_id)).toEqual(['sw-1']);
    const listed = (await list(client, 1, session)).partitions;
    expect(listed.map((p) => p.partition_id)).toEqual([pid('job-1')]);
    await expect.poll(() => leader.heartbeats.at(-1)?.partitions, { timeout: 5_000 }).toBe(1);
    expect(Number(leader.heartbeats.at(-1)!.bytes)).toBeGreaterThan(0);
    expect(await read(proc.address, pid('job-1'), 'cap-1', 1)).toEqual(['a', 'b', 'c']);
    await expect(read(proc.address, pid('job-1'), 'cap-2', 1)).rejects.toMatchObject({
      code: ErrorCode.PERMISSION_DENIED,
    });
    // Another writer of the job must carry the same capability.
    await expect(writePartition(proc.address, pid('job-1', 1), 'cap-2', [['x']])).rejects.toMatchObject({
      code: ErrorCode.PERMISSION_DENIED,
    });
  });

  it('restarted on its data directory, serves what it held under the same read capability and reports it', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    const first = await startWorker();
    await writePartition(first.proc.address, pid('job-1'), 'cap-1', [['a'], ['b']]);
    await first.proc.close();
    const { proc, client } = await startWorker();
    await expect.poll(() => leader.registrations.length, { timeout: 5_000 }).toBe(2);
    const again = leader.registrations[1]!;
    expect(again.jobs_with_partitions).toEqual(['job-1']);
    // A new process, a new session: the old one opens nothing.
    expect(again.session_id).not.toBe(leader.registrations[0]!.session_id);
    await expect(list(client, 1, leader.registrations[0]!.session_id)).rejects.toMatchObject({
      code: ErrorCode.PERMISSION_DENIED,
    });
    expect((await list(client, 1, again.session_id)).partitions.map((p) => p.partition_id)).toEqual([pid('job-1')]);
    expect(await read(proc.address, pid('job-1'), 'cap-1', 1)).toEqual(['a', 'b']);
    await expect(read(proc.address, pid('job-1'), 'cap-other', 1)).rejects.toMatchObject({
      code: ErrorCode.PERMISSION_DENIED,
    });
    await expect(writePartition(proc.address, pid('job-1', 1), 'cap-other', [['x']])).rejects.toMatchObject({
      code: ErrorCode.PERMISSION_DENIED,
    });
  });

  it('restarted without a job’s read capability on disk, deletes that job’s partitions rather than serve them', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    const first = await startWorker();
    await writePartition(first.proc.address, pid('job-1'), 'cap-1', [['a']]);
    await writePartition(first.proc.address, pid('job-2'), 'cap-2', [['b']]);
    await first.proc.close();
    await rm(capabilityFile(dataDir, 'job-1'));
    const { client } = await startWorker();
    await expect.poll(() => leader.registrations.length, { timeout: 5_000 }).toBe(2);
    expect(leader.registrations[1]!.jobs_with_partitions).toEqual(['job-2']);
    const session = leader.registrations[1]!.session_id;
    expect((await list(client, 1, session, 'job-1')).partitions).toEqual([]);
    expect((await list(client, 1, session, 'job-2')).partitions).toHaveLength(1);
  });

  it('deletes a job no leader names once the expiry timeout has passed on its clock', async () => {
    const leader = await fakeLeader(1);
    cleanup.push(() => leader.close());
    await writeLeader(leader);
    let now = 1_000_000;
    const { proc, client } = await startWorker('sw-1', {
      clock: { now: () => now },
      config: Configuration.of({
        ...config.toRecord(),
        'shuffle-worker.partition.expiry-timeout': '10 min',
        'shuffle-worker.partition.expiry-check-interval': '20 ms',
      }),
    });
    await expect.poll(() => leader.registrations.length, { timeout: 5_000 }).toBe(1);
    const session = leader.registrations[0]!.session_id;
    await writePartition(proc.address, pid('orphan'), 'cap', [['a']]);
    // Named by no heartbeat answer: kept until the timeout, then deleted. (Not asked with
    // ListPartitions meanwhile: a leader asking about a job names it.)
    now += 9 * 60_000;
    const beats = leader.heartbeats.length;
    await expect.poll(() => leader.heartbeats.length, { timeout: 5_000 }).toBeGreaterThan(beats + 2);
    expect(leader.heartbeats.at(-1)?.partitions).toBe(1);
    now += 60_000;
    await expect.poll(() => leader.heartbeats.at(-1)?.partitions, { timeout: 5_000 }).toBe(0);
    expect((await list(client, 1, session, 'orphan')).partitions).toEqual([]);
  });
});
