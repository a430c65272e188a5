import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  bindServer,
  fromServiceError,
  loadProto,
  ReboundError,
  shutdownServer,
  silentLogger,
  type PartitionWriteAck__Output,
  type PartitionWriteMessage,
  type ResultPartitionId,
} from '@rebound/core';
import { PartitionClientPool, ShuffleWorkerClientPool } from './client-pool.js';
import { encodeRecords } from './codec.js';
import { BLOCK_HEADER_BYTES, INDEX_VERSION, writeBlockHeader, type PartitionIndexFile } from './format.js';
import { createShuffleIngestHandler, newShuffleIngestMetrics, type ShuffleIngestMetrics } from './ingest.js';
import { createRemotePartitionWriter } from './remote-sink.js';
import { createPartitionServiceHandlers } from './service.js';
import { PartitionStore } from './store.js';

export const JOB = 'abcdefabcdefabcdefabcdefabcdef01';
export const CAPABILITY = 'read-cap-of-the-job';

export interface Worker {
  id: string;
  address: string;
  dataDir: string;
  store: PartitionStore;
  server: grpc.Server;
  metrics: ShuffleIngestMetrics;
  admitted: Array<[string, string]>;
  stop(): Promise<void>;
}

const workers: Worker[] = [];
export let shuffleClients: ShuffleWorkerClientPool;
export let partitionClients: PartitionClientPool;
export let one: Worker;
export let two: Worker;
export let three: Worker;

/*
 * Each file's hooks call these: with `isolate: false` (vitest.config.ts) a worker evaluates this
 * module once for every file that imports it, so each file opens client pools of its own (the
 * previous file closed its pools) and stops the workers it started.
 */

export function openClients(): void {
  shuffleClients = new ShuffleWorkerClientPool();
  partitionClients = new PartitionClientPool();
}

export function closeClients(): void {
  shuffleClients.close();
  partitionClients.close();
}

/** Opens the client pools and starts the workers `one`, `two` and `three`. */
export async function startWorkers(): Promise<void> {
  openClients();
  one = await startWorker('sw-1');
  two = await startWorker('sw-2');
  three = await startWorker('sw-3');
}

export function forgetAdmissions(): void {
  for (const w of workers) w.admitted.length = 0;
}

/** Closes the client pools and stops every worker started since the last call. */
export async function stopWorkers(): Promise<void> {
  closeClients();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
}

/** A shuffle worker as far as the data plane goes: the ingest and the PartitionService on one server. */
export async function startWorker(
  id: string,
  admit: (jobId: string, capability: string) => Promise<void> = async () => {},
): Promise<Worker> {
  const dataDir = await mkdtemp(join(tmpdir(), `rebound-shuffle-${id}-`));
  const store = await PartitionStore.open({ dataDir, retainOnOpen: true, blockSize: 1024 });
  const metrics = newShuffleIngestMetrics();
  const admitted: Array<[string, string]> = [];
  const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
  server.addService(loadProto().ShuffleWorkerService.service, {
    WritePartition: createShuffleIngestHandler(store, {
      logger: silentLogger(),
      workerId: id,
      metrics,
      admitWriter: async (jobId, capability) => {
        admitted.push([jobId, capability]);
        await admit(jobId, capability);
      },
    }),
  });
  server.addService(loadProto().PartitionService.service, createPartitionServiceHandlers(store, silentLogger()));
  const port = await bindServer(server, '127.0.0.1', 0);
  let stopped = false;
  const worker: Worker = {
    id,
    address: `127.0.0.1:${port}`,
    dataDir,
    store,
    server,
    metrics,
    admitted,
    async stop() {
      if (stopped) return;
      stopped = true;
      await shutdownServer(server, 200);
      await store.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
  workers.push(worker);
  return worker;
}

export async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

export function pid(vertex: string, subtask = 0): ResultPartitionId {
  return { job_id: JOB, vertex_id: vertex, subtask, attempt: 0, epoch: 4 };
}

export function record(i: number): unknown {
  return { i, word: `w${i % 331}`, pad: 'p'.repeat(20 + (i % 60)) };
}

export async function collect(it: AsyncIterable<unknown[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of it) out.push(...batch);
  return out;
}

export function writerTo(targets: Worker[], id: ResultPartitionId, n: number, timeoutMs = 10_000) {
  return createRemotePartitionWriter(
    id,
    n,
    targets.map((w) => ({ worker_id: w.id, address: w.address })),
    { clients: shuffleClients, readCapability: CAPABILITY, timeoutMs, blockSize: 1024 },
  );
}

/** Writes `count` records through a remote writer; returns them by subpartition. */
export async function produce(targets: Worker[], id: ResultPartitionId, n: number, count: number) {
  const writer = writerTo(targets, id, n);
  const expected: unknown[][] = Array.from({ length: n }, () => []);
  for (let i = 0; i < count; i++) {
    const sub = i % 4 === 0 ? 0 : i % n;
    const r = record(i);
    writer.emit(sub, r);
    expected[sub]!.push(r);
    if (i % 300 === 0) await writer.flushIfNeeded();
  }
  const finished = await writer.finish();
  return { expected, finished };
}

/** Whole blocks of `records` for subpartition `sub`. */
export function block(sub: number, records: unknown[]): Buffer {
  const payload = encodeRecords(records);
  const b = Buffer.alloc(BLOCK_HEADER_BYTES + payload.length);
  payload.copy(b, BLOCK_HEADER_BYTES);
  writeBlockHeader(b, sub, payload.length, records.length);
  return b;
}

/** The index a correct producer commits for `blocks` written in this order. */
export function indexFor(id: ResultPartitionId, n: number, blocks: Buffer[]): PartitionIndexFile {
  const index: PartitionIndexFile = {
    version: INDEX_VERSION,
    partitionId: { ...id, epoch: Number(id.epoch) } as PartitionIndexFile['partitionId'],
    numSubpartitions: n,
    dataBytes: 0,
    blocks: Array.from({ length: n }, () => []),
    subpartitionBytes: new Array<number>(n).fill(0),
    subpartitionRecords: new Array<number>(n).fill(0),
    finishedAtMs: 1,
  };
  for (const b of blocks) {
    const sub = b.readUInt32BE(0);
    index.blocks[sub]!.push([index.dataBytes, b.length]);
    index.subpartitionBytes[sub]! += b.length - BLOCK_HEADER_BYTES;
    index.subpartitionRecords[sub]! += b.readUInt32BE(8);
    index.dataBytes += b.length;
  }
  return index;
}

/** Sends `messages` on a raw WritePartition call and returns its answer or its ReboundError. */
export function rawWrite(
  w: Worker,
  messages: PartitionWriteMessage[],
  end = true,
): {
  result: Promise<PartitionWriteAck__Output | ReboundError>;
  call: grpc.ClientWritableStream<PartitionWriteMessage>;
} {
  let call!: grpc.ClientWritableStream<PartitionWriteMessage>;
  const result = new Promise<PartitionWriteAck__Output | ReboundError>((resolve) => {
    call = shuffleClients.get(w.address).WritePartition((err, ack) => {
      if (err) resolve(fromServiceError(err));
      else resolve(ack!);
    });
  });
  call.on('error', () => {});
  for (const m of messages) call.write(m);
  if (end) call.end();
  return { result, call };
}

export async function partitionDirsOf(w: Worker): Promise<string[]> {
  return readdir(join(w.dataDir, 'partitions', JOB)).catch(() => []);
}
