import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  bindServer,
  ErrorCode,
  loadProto,
  ReboundError,
  shutdownServer,
  type PartitionWriteAck,
  type PartitionWriteMessage__Output,
} from '@rebound/core';
import { createRemotePartitionWriter, unreachableShuffleWorkers } from './remote-sink.js';
import { CAPABILITY, closeClients, openClients, pid, shuffleClients } from './shuffle-ingest.test-util.js';

beforeAll(openClients);
afterAll(closeClients);

describe('remote partition writer backpressure', () => {
  let server: grpc.Server;
  let address: string;
  let received = 0;
  let stalled = false;
  const calls: Array<grpc.ServerReadableStream<PartitionWriteMessage__Output, PartitionWriteAck>> = [];

  beforeAll(async () => {
    server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
    server.addService(loadProto().ShuffleWorkerService.service, {
      // A slow disk: every message takes a few ms. A stalled one never reads nor answers.
      WritePartition: (
        call: grpc.ServerReadableStream<PartitionWriteMessage__Output, PartitionWriteAck>,
        callback: grpc.sendUnaryData<PartitionWriteAck>,
      ) => {
        calls.push(call);
        if (stalled) return;
        void (async () => {
          let total = 0;
          try {
            for await (const msg of call as AsyncIterable<PartitionWriteMessage__Output>) {
              if (msg.blocks) {
                total += msg.blocks.length;
                received += msg.blocks.length;
                await new Promise((r) => setTimeout(r, 2));
              }
            }
            callback(null, { worker_id: 'slow', total_bytes: total });
          } catch {
            // cancelled
          }
        })();
      },
    });
    address = `127.0.0.1:${await bindServer(server, '127.0.0.1', 0)}`;
  });
  afterAll(async () => {
    await shutdownServer(server, 200);
  });

  it('holds the producer to what a slow worker takes instead of queueing in gRPC', async () => {
    const writer = createRemotePartitionWriter(pid('slow'), 4, [{ worker_id: 'slow', address }], {
      clients: shuffleClients,
      readCapability: CAPABILITY,
      timeoutMs: 10_000,
      blockSize: 8 * 1024,
    });
    let maxAhead = 0;
    const payload = 'z'.repeat(200);
    for (let i = 0; i < 100_000; i++) {
      writer.emit(i % 4, { i, payload });
      if (i % 100 === 0) {
        await writer.flushIfNeeded();
        // Sealed by the producer but not yet read by the worker: in the writer's queue or in gRPC.
        maxAhead = Math.max(maxAhead, writer.dataBytes - received);
      }
    }
    const finished = await writer.finish();
    expect(finished.dataBytes).toBeGreaterThan(20 * 1024 * 1024);
    expect(received).toBe(finished.dataBytes);
    // Without backpressure the producer runs ahead by nearly the whole partition.
    expect(maxAhead).toBeLessThan(6 * 1024 * 1024);
  });

  it('fails with UNAVAILABLE when a worker takes nothing for the write timeout', async () => {
    stalled = true;
    try {
      const writer = createRemotePartitionWriter(pid('stalled'), 1, [{ worker_id: 'stuck', address }], {
        clients: shuffleClients,
        readCapability: CAPABILITY,
        timeoutMs: 300,
      });
      let err: unknown;
      try {
        for (let i = 0; i < 200_000 && err === undefined; i++) {
          writer.emit(0, { i, pad: 'q'.repeat(100) });
          if (i % 500 === 0) await writer.flushIfNeeded();
        }
        await writer.finish();
      } catch (e) {
        err = e;
      }
      expect((err as ReboundError).code).toBe(ErrorCode.UNAVAILABLE);
      expect((err as ReboundError).message).toMatch(/shuffle worker stuck .* (took no data|did not acknowledge)/);
      // The writer wraps the sink's failure; the worker is still named.
      expect(unreachableShuffleWorkers(err)).toEqual(['stuck']);
    } finally {
      stalled = false;
    }
  });
});
