import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CHANNEL_OPTIONS,
  ErrorCode,
  bindServer,
  loadProto,
  packSubpartitionBytes,
  shutdownServer,
  silentLogger,
  unary,
  type ResultPartitionId,
  type ShuffleWorkerServiceClient,
} from '@rebound/core';
import { EpochFence, LeaderCallGuard } from '@rebound/ha';
import { PartitionStore, createPartitionServiceHandlers, readRemoteSubpartitions } from '@rebound/partition';
import { JobReadCapabilities } from './job-read-capabilities.js';
import { OrphanedPartitions } from './orphaned-partitions.js';
import { ShuffleWorker } from './shuffle-worker.js';

const SESSION = 'worker-session';

function pid(job: string, vertex: string, subtask = 0): ResultPartitionId {
  return { job_id: job, vertex_id: vertex, subtask, attempt: 0, epoch: 3 };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

interface Harness {
  worker: ShuffleWorker;
  store: PartitionStore;
  client: ShuffleWorkerServiceClient;
  partitions: InstanceType<ReturnType<typeof loadProto>['PartitionService']>;
  clock: { now(): number; advance(ms: number): void };
  /** The epoch the leader record names (what the fence confirms newer epochs against). */
  recorded: { epoch: number };
  fence: EpochFence;
  dataDir: string;
  /** Writes a finished partition of `job` through the worker, as a writer under `capability` would. */
  write(id: ResultPartitionId, capability: string, records: unknown[][]): Promise<void>;
}

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-sw-'));
  cleanup.push(() => rm(dataDir, { recursive: true, force: true }));
});

async function harness(expiryMs = 60_000): Promise<Harness> {
  let t = 5_000_000;
  const clock = { now: () => t, advance: (ms: number) => void (t += ms) };
  const store = await PartitionStore.open({ dataDir });
  cleanup.push(() => store.close());
  const capabilities = await JobReadCapabilities.load(dataDir, silentLogger());
  const recorded = { epoch: 3 };
  const fence = new EpochFence(async () => recorded.epoch);
  fence.raise(3);
  const worker = new ShuffleWorker({
    id: 'sw-1',
    store,
    capabilities,
    orphans: new OrphanedPartitions(expiryMs, clock),
    guard: new LeaderCallGuard(fence, SESSION, 'shuffle worker', 'sw-1', silentLogger()),
    logger: silentLogger(),
  });
  const proto = loadProto();
  const server = new grpc.Server();
  server.addService(
    proto.ShuffleWorkerService.service,
    worker.handlers((_call, cb) => cb({ code: grpc.status.UNIMPLEMENTED })),
  );
  server.addService(
    proto.PartitionService.service,
    createPartitionServiceHandlers(store, silentLogger(), {
      checkReadCapability: (job, cap, p) => worker.checkReadCapability(job, cap, p),
    }),
  );
  const port = await bindServer(server, '127.0.0.1', 0);
  cleanup.push(() => shutdownServer(server, 100));
  const address = `127.0.0.1:${port}`;
  const client = new proto.ShuffleWorkerService(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  const partitions = new proto.PartitionService(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
  cleanup.push(async () => {
    client.close();
    partitions.close();
  });
  return {
    worker,
    store,
    client,
    partitions,
    clock,
    recorded,
    fence,
    dataDir,
    write: async (id, capability, records) => {
      await worker.admitWriter(id.job_id!, capability);
      const w = await store.createWriter(id, records.length);
      records.forEach((recs, s) => recs.forEach((r) => w.emit(s, r)));
      await w.finish();
    },
  };
}

const list = (h: Harness, job: string, epoch = 3, session = SESSION) =>
  unary(h.client, h.client.ListPartitions, { epoch, job_id: job, session_id: session }, 5_000);

describe('ShuffleWorker', () => {
  it('lists a job’s finished partitions with bytes per subpartition, as a TaskManager reports them', async () => {
    const h = await harness();
    await h.write(pid('job-1', 'map', 0), 'cap-1', [['a', 'b'], [], ['c']]);
    await h.write(pid('job-1', 'map', 1), 'cap-1', [['d'], ['e'], []]);
    await h.write(pid('job-2', 'map', 0), 'cap-2', [['x']]);
    const res = await list(h, 'job-1');
    expect(res.partitions.map((p) => p.partition_id?.subtask).sort()).toEqual([0, 1]);
    for (const p of res.partitions) {
      const finished = h.store.get(p.partition_id!)!;
      expect(p.num_subpartitions).toBe(3);
      expect(Buffer.from(p.packed_subpartition_bytes)).toEqual(packSubpartitionBytes(finished.subpartitionBytes));
      expect(Number(p.total_bytes)).toBe(finished.subpartitionBytes.reduce((a, b) => a + b, 0));
    }
    expect(h.worker.usage().partitions).toBe(3);
    expect(h.worker.jobsWithPartitions().sort()).toEqual(['job-1', 'job-2']);
  });

  it('refuses the calls of a deposed leader, of an epoch no leader record names, and without its session', async () => {
    const h = await harness();
    await h.write(pid('job-1', 'map'), 'cap-1', [['a']]);
    await expect(list(h, 'job-1', 2)).rejects.toMatchObject({ code: ErrorCode.STALE_EPOCH });
    await expect(list(h, 'job-1', 4)).rejects.toMatchObject({ code: ErrorCode.EPOCH_UNCONFIRMED });
    await expect(list(h, 'job-1', 3, 'guessed')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    await expect(
      unary(h.client, h.client.ReleaseJob, { epoch: 3, job_id: 'job-1', session_id: '' }, 5_000),
    ).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    await expect(
      unary(
        h.client,
        h.client.ReleasePartitions,
        { epoch: 2, partitions: [pid('job-1', 'map')], session_id: SESSION },
        5_000,
      ),
    ).rejects.toMatchObject({ code: ErrorCode.STALE_EPOCH });
    expect(h.store.has(pid('job-1', 'map'))).toBe(true);
    // A new leader, once the record names it, fences the old one out.
    h.recorded.epoch = 4;
    expect((await list(h, 'job-1', 4)).partitions).toHaveLength(1);
    await expect(list(h, 'job-1', 3)).rejects.toMatchObject({ code: ErrorCode.STALE_EPOCH });
  });

  it('releases single partitions, and a whole job with its read capability', async () => {
    const h = await harness();
    await h.write(pid('job-1', 'map', 0), 'cap-1', [['a']]);
    await h.write(pid('job-1', 'map', 1), 'cap-1', [['b']]);
    const one = await unary(
      h.client,
      h.client.ReleasePartitions,
      { epoch: 3, partitions: [pid('job-1', 'map', 0), pid('job-1', 'nope')], session_id: SESSION },
      5_000,
    );
    expect(one.released).toBe(1);
    expect((await list(h, 'job-1')).partitions.map((p) => p.partition_id?.subtask)).toEqual([1]);
    const all = await unary(h.client, h.client.ReleaseJob, { epoch: 3, job_id: 'job-1', session_id: SESSION }, 5_000);
    expect(all.released).toBe(1);
    expect((await list(h, 'job-1')).partitions).toEqual([]);
    expect(await readdir(join(h.dataDir, 'partitions'))).toEqual([]);
    await expect(readdir(join(h.dataDir, 'jobs'))).resolves.toEqual([]);
    // A later writer of the job is its first again.
    await h.write(pid('job-1', 'map', 2), 'cap-new', [['c']]);
  });

  it('serves reads only with the job’s read capability, and refuses a writer with another one', async () => {
    const h = await harness();
    const id = pid('job-1', 'map');
    await h.write(id, 'cap-1', [['a', 'b'], ['c']]);
    const read = (cap: string) =>
      collect(readRemoteSubpartitions(h.partitions, id, 0, 1, { timeoutMs: 5_000, readCapability: cap }));
    expect((await read('cap-1')).flat()).toEqual(['a', 'b', 'c']);
    await expect(read('cap-2')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    await expect(read('')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    await expect(h.worker.admitWriter('job-1', 'cap-2')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
  });

  it('deletes the partitions of jobs no leader named for the expiry timeout, and keeps the named ones', async () => {
    const h = await harness(60_000);
    await h.write(pid('live', 'map'), 'cap-l', [['a']]);
    await h.write(pid('orphan', 'map'), 'cap-o', [['b']]);
    h.clock.advance(30_000);
    // A leader that does not know the worker names nothing; one that does names `live`.
    h.worker.onLiveJobs(['live', 'some-other-job']);
    h.clock.advance(29_999);
    expect(await h.worker.expireOrphans()).toEqual([]);
    h.clock.advance(1);
    expect(await h.worker.expireOrphans()).toEqual(['orphan']);
    expect(h.store.has(pid('orphan', 'map'))).toBe(false);
    expect(h.store.has(pid('live', 'map'))).toBe(true);
    await expect(readdir(join(h.dataDir, 'jobs'))).resolves.toEqual(['live']);
    expect(h.worker.heldJobs()).toEqual(['live']);
    // A ListPartitions of the job counts as naming it.
    h.clock.advance(59_000);
    await list(h, 'live');
    h.clock.advance(59_000);
    expect(await h.worker.expireOrphans()).toEqual([]);
    h.clock.advance(1_000);
    expect(await h.worker.expireOrphans()).toEqual(['live']);
    expect(h.worker.usage()).toEqual({ partitions: 0, bytes: 0 });
  });

  it('counts a job that was admitted but never finished a partition from its first write', async () => {
    const h = await harness(10_000);
    await h.worker.admitWriter('started', 'cap');
    expect(h.worker.heldJobs()).toEqual(['started']);
    h.clock.advance(10_000);
    expect(await h.worker.expireOrphans()).toEqual(['started']);
    await expect(readdir(join(h.dataDir, 'jobs'))).resolves.toEqual([]);
  });
});
