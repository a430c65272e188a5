import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  bindServer,
  Configuration,
  ErrorCode,
  loadProto,
  ReboundError,
  shutdownServer,
  silentLogger,
  type InputGateDeploymentDescriptor__Output,
  type PartitionLocation__Output,
  type ResultPartitionId__Output,
  type ShuffleWorkerLocation__Output,
  type TaskDeploymentDescriptor__Output,
} from '@rebound/core';
import {
  createPartitionServiceHandlers,
  createShuffleIngestHandler,
  PartitionClientPool,
  PartitionStore,
  ShuffleWorkerClientPool,
} from '@rebound/partition';
import { InputPartitionNotFoundError, ShuffleEnvironment } from './shuffle-environment.js';

const JOB = '00112233445566778899aabbccddeeff';
const CAPABILITY = 'the-read-capability';
const config = Configuration.of({ 'rpc.partition-request.timeout': '5 s', 'shuffle.remote.write-timeout': '10 s' });

interface Worker {
  location: ShuffleWorkerLocation__Output;
  store: PartitionStore;
  server: grpc.Server;
  dataDir: string;
}

const cleanups: Array<() => Promise<void>> = [];

async function tempDir(what: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `rebound-shuffle-env-${what}-`));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** A shuffle worker's data plane: the ingest and the PartitionService over its own store. */
async function startWorker(id: string): Promise<Worker> {
  const dataDir = await tempDir(id);
  const store = await PartitionStore.open({ dataDir, retainOnOpen: true });
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  server.addService(loadProto().ShuffleWorkerService.service, {
    WritePartition: createShuffleIngestHandler(store, {
      logger: silentLogger(),
      workerId: id,
      admitWriter: async () => {},
    }),
  });
  server.addService(loadProto().PartitionService.service, createPartitionServiceHandlers(store, silentLogger()));
  const port = await bindServer(server, '127.0.0.1', 0);
  cleanups.push(async () => {
    await shutdownServer(server, 100);
    await store.close();
  });
  return { location: { worker_id: id, address: `127.0.0.1:${port}` }, store, server, dataDir };
}

let tmStore: PartitionStore;
let partitionClients: PartitionClientPool;
let shuffleWorkerClients: ShuffleWorkerClientPool;
let env: ShuffleEnvironment;

beforeAll(async () => {
  tmStore = await PartitionStore.open({ dataDir: await tempDir('tm'), blockSize: 1024 });
  partitionClients = new PartitionClientPool();
  shuffleWorkerClients = new ShuffleWorkerClientPool();
  env = new ShuffleEnvironment({ taskManagerId: 'tm-1', store: tmStore, partitionClients, shuffleWorkerClients });
});
afterEach(() => {
  env.metrics.workerFallbacks = 0;
});
afterAll(async () => {
  partitionClients.close();
  shuffleWorkerClients.close();
  await tmStore.close();
  for (const c of cleanups.reverse()) await c();
});

function producerTdd(
  vertex: string,
  workers: ShuffleWorkerLocation__Output[],
  n: number,
): TaskDeploymentDescriptor__Output {
  return {
    epoch: 7,
    execution: { job_id: JOB, vertex_id: vertex, subtask: 0, attempt: 0 },
    output: {
      num_subpartitions: n,
      distribution: 'HASH',
      key_selector_id: '',
      combiner_id: '',
      shuffle_workers: workers,
    },
    partition_read_capability: CAPABILITY,
  } as unknown as TaskDeploymentDescriptor__Output;
}

function idOf(vertex: string): ResultPartitionId__Output {
  return { job_id: JOB, vertex_id: vertex, subtask: 0, attempt: 0, epoch: 7 };
}

function gateOf(
  locations: PartitionLocation__Output[],
  start: number,
  end: number,
): InputGateDeploymentDescriptor__Output {
  return {
    partitions: locations,
    subpartition_start: start,
    subpartition_end: end,
  } as unknown as InputGateDeploymentDescriptor__Output;
}

function onWorkers(vertex: string, workers: ShuffleWorkerLocation__Output[]): PartitionLocation__Output {
  // The producer's TaskManager is named too, as the JobMaster does; the workers take precedence.
  return {
    partition_id: idOf(vertex),
    location: { task_manager_id: 'tm-elsewhere', address: '127.0.0.1:1' },
    shuffle_workers: workers,
  } as unknown as PartitionLocation__Output;
}

/** Produces `count` records through the environment's writer; returns them by subpartition. */
async function produce(vertex: string, workers: ShuffleWorkerLocation__Output[], n: number, count: number) {
  const writer = (await env.createResultPartitionWriter(producerTdd(vertex, workers, n), config))!;
  const expected: unknown[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < count; i++) {
    const r = { vertex, i, text: `record ${i} `.repeat(1 + (i % 5)) };
    writer.emit(i % n, r);
    expected[i % n]!.push(r);
    if (i % 500 === 0) await writer.flushIfNeeded();
  }
  const written = await writer.finish();
  return { expected, written };
}

const read = (gate: InputGateDeploymentDescriptor__Output): AsyncGenerator<unknown[]> =>
  env.readInputGate(gate, { config, signal: new AbortController().signal, readCapability: CAPABILITY });

async function collect(it: AsyncIterable<unknown[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of it) out.push(...batch);
  return out;
}

describe('ShuffleEnvironment', () => {
  let one: Worker;
  let two: Worker;
  beforeAll(async () => {
    one = await startWorker('sw-1');
    two = await startWorker('sw-2');
  });

  it('writes locally without shuffle workers, and reads a local partition from the store', async () => {
    const { expected, written } = await produce('local', [], 3, 2_000);
    expect(env.metrics.localWriters).toBe(1);
    expect(tmStore.has(idOf('local'))).toBe(true);
    expect(written.totalRecords).toBe(2_000);
    const gate = gateOf(
      [
        { partition_id: idOf('local'), location: { task_manager_id: 'tm-1', address: '' }, shuffle_workers: [] },
      ] as unknown as PartitionLocation__Output[],
      1,
      2,
    );
    expect(await collect(read(gate))).toEqual(expected.slice(1).flat());
  });

  it('writes to every shuffle worker named by the deployment, and nothing to the TaskManager', async () => {
    const { expected, written } = await produce('remote', [one.location, two.location], 2, 3_000);
    expect(env.metrics.remoteWriters).toBe(1);
    expect(tmStore.has(idOf('remote'))).toBe(false);
    expect(tmStore.listFinished(JOB).map((p) => p.partition_id!.vertex_id)).not.toContain('remote');
    expect(one.store.get(idOf('remote'))!.subpartitionBytes).toEqual(written.subpartitionBytes);
    expect(two.store.has(idOf('remote'))).toBe(true);
    expect(await collect(read(gateOf([onWorkers('remote', [one.location, two.location])], 0, 1)))).toEqual(
      expected.flat(),
    );
    expect(env.metrics.workerFallbacks).toBe(0);
  });

  it('falls back to the next worker when the first lacks the partition', async () => {
    const { expected } = await produce('only-on-two', [two.location], 2, 500);
    expect(await collect(read(gateOf([onWorkers('only-on-two', [one.location, two.location])], 0, 1)))).toEqual(
      expected.flat(),
    );
    expect(env.metrics.workerFallbacks).toBe(1);
  });

  it('throws InputPartitionNotFoundError once every worker failed', async () => {
    const gone = { worker_id: 'sw-gone', address: '127.0.0.1:1' };
    const err = await collect(read(gateOf([onWorkers('nowhere', [one.location, gone])], 0, 0))).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(InputPartitionNotFoundError);
    expect((err as InputPartitionNotFoundError).partition).toEqual(idOf('nowhere'));
    expect((err as ReboundError).code).toBe(ErrorCode.PARTITION_NOT_FOUND);
    expect((err as ReboundError).message).toMatch(/sw-1 .*not found.*sw-gone/);
  });

  it('resumes on the replica when the first worker dies mid-read: every record once, in order', async () => {
    const a = await startWorker('sw-a');
    const b = await startWorker('sw-b');
    const n = 4;
    const { expected, written } = await produce('replicated', [a.location, b.location], n, 40_000);
    const blocks = written.blocks.reduce((s, x) => s + x.offsets.length, 0);
    expect(blocks).toBeGreaterThan(1_000);
    const out: unknown[] = [];
    let batches = 0;
    for await (const batch of read(gateOf([onWorkers('replicated', [a.location, b.location])], 0, n - 1))) {
      out.push(...batch);
      if (++batches === 100) a.server.forceShutdown();
    }
    expect(env.metrics.workerFallbacks).toBe(1);
    expect(out.length).toBe(expected.flat().length);
    expect(out).toEqual(expected.flat());
  });
});
