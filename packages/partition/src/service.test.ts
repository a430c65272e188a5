import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bindServer,
  ErrorCode,
  loadProto,
  ReboundError,
  shutdownServer,
  silentLogger,
  type ResultPartitionId,
} from '@rebound/core';
import { readLocalSubpartitions, readRemoteSubpartitions } from './client.js';
import { PartitionClientPool } from './client-pool.js';
import { createPartitionServiceHandlers, newPartitionServerMetrics } from './service.js';
import { PartitionStore } from './store.js';

const JOB = 'abcdefabcdefabcdefabcdefabcdef00';
const N = 8;
const RECORDS = 40_000;
const big: ResultPartitionId = { job_id: JOB, vertex_id: 'src', subtask: 0, attempt: 0, epoch: 5 };

let dataDir: string;
let store: PartitionStore;
let server: grpc.Server;
let address: string;
let pool: PartitionClientPool;
const metrics = newPartitionServerMetrics();
const expected: unknown[][] = Array.from({ length: N }, () => []);

function record(i: number): unknown {
  return { i, word: `w${i % 977}`, pad: 'p'.repeat(60 + (i % 40)) };
}

async function waitFor(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
}

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-partition-svc-'));
  store = await PartitionStore.open({ dataDir });
  const writer = await store.createWriter(big, N);
  for (let i = 0; i < RECORDS; i++) {
    const sub = i % 3 === 0 ? 0 : i % N;
    const r = record(i);
    writer.emit(sub, r);
    expected[sub]!.push(r);
    if (i % 500 === 0) await writer.flushIfNeeded();
  }
  await writer.finish();
  server = new grpc.Server();
  server.addService(
    loadProto().PartitionService.service,
    createPartitionServiceHandlers(store, silentLogger(), { metrics }),
  );
  const port = await bindServer(server, '127.0.0.1', 0);
  address = `127.0.0.1:${port}`;
  pool = new PartitionClientPool();
});

afterAll(async () => {
  pool?.close();
  if (server) await shutdownServer(server, 1_000);
  await store?.close();
  await rm(dataDir, { recursive: true, force: true });
});

async function collectRecords(it: AsyncIterable<unknown[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of it) for (const r of batch) out.push(r);
  return out;
}

describe('PartitionService', () => {
  it('streams a partition of a few MB to a remote client, exactly', async () => {
    const total = store.get(big)!.totalBytes;
    expect(total).toBeGreaterThan(3 * 1024 * 1024);
    const client = pool.get(address);
    expect(pool.get(address)).toBe(client);
    expect(await collectRecords(readRemoteSubpartitions(client, big, 0, N - 1, { timeoutMs: 5_000 }))).toEqual(
      expected.flat(),
    );
    expect(await collectRecords(readRemoteSubpartitions(client, big, 2, 4, { timeoutMs: 5_000 }))).toEqual(
      expected.slice(2, 5).flat(),
    );
    // The local fast path yields the same records.
    expect(await collectRecords(readLocalSubpartitions(store, big, 2, 4))).toEqual(expected.slice(2, 5).flat());
  });

  it('answers a missing partition with PARTITION_NOT_FOUND', async () => {
    const missing = { ...big, attempt: 7 };
    const err = await collectRecords(
      readRemoteSubpartitions(pool.get(address), missing, 0, 0, { timeoutMs: 5_000 }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReboundError);
    expect((err as ReboundError).code).toBe(ErrorCode.PARTITION_NOT_FOUND);
    expect((err as ReboundError).message).toMatch(/src#0\.7@5 not found/);
  });

  it('answers UNAVAILABLE when the producer TaskManager is gone', async () => {
    const other = new grpc.Server();
    const port = await bindServer(other, '127.0.0.1', 0);
    await shutdownServer(other, 100);
    const local = new PartitionClientPool();
    try {
      const err = await collectRecords(
        readRemoteSubpartitions(local.get(`127.0.0.1:${port}`), big, 0, 0, { timeoutMs: 5_000 }),
      ).catch((e: unknown) => e);
      expect((err as ReboundError).code).toBe(ErrorCode.UNAVAILABLE);
    } finally {
      local.close();
    }
  });

  it('fails with UNAVAILABLE when the producer stalls, and with TASK_CANCELED when aborted', async () => {
    const stalled = new grpc.Server();
    const calls: Array<grpc.ServerWritableStream<unknown, unknown>> = [];
    stalled.addService(loadProto().PartitionService.service, {
      ReadSubpartitions: (call: grpc.ServerWritableStream<unknown, unknown>) => void calls.push(call),
    });
    const port = await bindServer(stalled, '127.0.0.1', 0);
    const local = new PartitionClientPool();
    try {
      const client = local.get(`127.0.0.1:${port}`);
      const err = await collectRecords(readRemoteSubpartitions(client, big, 0, 0, { timeoutMs: 200 })).catch(
        (e: unknown) => e,
      );
      expect((err as ReboundError).code).toBe(ErrorCode.UNAVAILABLE);
      expect((err as ReboundError).message).toMatch(/no data from the producer/);

      const ac = new AbortController();
      const reading = collectRecords(
        readRemoteSubpartitions(client, big, 0, 0, { timeoutMs: 10_000, signal: ac.signal }),
      ).catch((e: unknown) => e);
      await waitFor(() => calls.length === 2, 'the second call to arrive');
      ac.abort();
      expect(((await reading) as ReboundError).code).toBe(ErrorCode.TASK_CANCELED);
    } finally {
      local.close();
      await shutdownServer(stalled, 100);
    }
  });

  it('paces disk reads by a slow consumer instead of buffering the partition', async () => {
    const p = store.get(big)!;
    const totalBlocks = p.blocks.reduce((n, b) => n + b.offsets.length, 0);
    const readsBefore = store.metrics.blocksRead;
    const iterator = readRemoteSubpartitions(pool.get(address), big, 0, N - 1, { timeoutMs: 5_000 })[
      Symbol.asyncIterator
    ]();
    const first = await iterator.next();
    expect(first.done).toBe(false);
    // The consumer now stops taking data: the server must end up waiting for it.
    await waitFor(() => metrics.streamsWaitingForDrain === 1, 'the server to wait for the consumer');
    const readWhilePaused = store.metrics.blocksRead - readsBefore;
    expect(readWhilePaused).toBeLessThan(totalBlocks / 2);
    // Still waiting: beyond the one block of read-ahead, nothing more is read while the consumer
    // does not move.
    await new Promise((r) => setImmediate(r));
    expect(store.metrics.blocksRead - readsBefore).toBeLessThanOrEqual(readWhilePaused + 1);
    expect(metrics.streamsWaitingForDrain).toBe(1);

    const rest: unknown[] = [...(first.value as unknown[])];
    for (let r = await iterator.next(); !r.done; r = await iterator.next()) rest.push(...r.value);
    expect(rest).toEqual(expected.flat());
  });

  it('stops reading when the consumer cancels', async () => {
    const readsBefore = store.metrics.blocksRead;
    const p = store.get(big)!;
    const totalBlocks = p.blocks.reduce((n, b) => n + b.offsets.length, 0);
    const iterator = readRemoteSubpartitions(pool.get(address), big, 0, N - 1, { timeoutMs: 5_000 })[
      Symbol.asyncIterator
    ]();
    // Not a loop that may run zero times: the first batch must arrive, and hold records.
    const first = await iterator.next();
    expect(first.done).toBe(false);
    expect((first.value as unknown[]).length).toBeGreaterThan(0);
    await iterator.return?.(undefined);
    await waitFor(() => metrics.streamsActive === 0, 'the server stream to end');
    const read = store.metrics.blocksRead - readsBefore;
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(totalBlocks);
  });
});
