import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bindServer, ErrorCode, PermissionDeniedError, ReboundError, shutdownServer } from '@rebound/core';
import {
  ShuffleWorkerUnreachableError,
  createRemotePartitionWriter,
  unreachableShuffleWorkers,
} from './remote-sink.js';
import {
  CAPABILITY,
  JOB,
  block,
  forgetAdmissions,
  one,
  partitionDirsOf,
  pid,
  rawWrite,
  record,
  shuffleClients,
  startWorker,
  startWorkers,
  stopWorkers,
  three,
  waitFor,
  writerTo,
} from './shuffle-ingest.test-util.js';

beforeAll(startWorkers);
afterEach(forgetAdmissions);
afterAll(stopWorkers);

describe('remote partition writer and shuffle ingest', () => {
  it('fails the finish when any worker fails, and leaves nothing on the others', async () => {
    const id = pid('one-refuses');
    const refusing = await startWorker('sw-refuses', async () => {
      throw new PermissionDeniedError('refused');
    });
    const writer = writerTo([one, refusing], id, 2);
    for (let i = 0; i < 2000; i++) writer.emit(i % 2, record(i));
    const err = await writer.finish().catch((e: unknown) => e);
    expect((err as ReboundError).code).toBe(ErrorCode.PERMISSION_DENIED);
    // It answered: the leader has no reason to stop placing partitions there.
    expect(err).not.toBeInstanceOf(ShuffleWorkerUnreachableError);
    await waitFor(() => one.metrics.streamsActive === 0, 'the healthy worker to drop the stream');
    expect(one.store.has(id)).toBe(false);
    await waitFor(async () => !(await partitionDirsOf(one)).includes('one-refuses-0-0-e4'), 'the directory to go');

    // An unreachable worker is UNAVAILABLE.
    const gone = new grpc.Server();
    const port = await bindServer(gone, '127.0.0.1', 0);
    await shutdownServer(gone, 100);
    const lost = createRemotePartitionWriter(id, 1, [{ worker_id: 'sw-gone', address: `127.0.0.1:${port}` }], {
      clients: shuffleClients,
      readCapability: CAPABILITY,
      timeoutMs: 5_000,
    });
    lost.emit(0, 'x');
    const unreachable = await lost.finish().catch((e: unknown) => e);
    expect((unreachable as ReboundError).code).toBe(ErrorCode.UNAVAILABLE);
    expect((unreachable as ReboundError).message).toMatch(/sw-gone/);
    // Named, so that the TaskManager's failure report tells the leader where not to place.
    expect(unreachable).toBeInstanceOf(ShuffleWorkerUnreachableError);
    expect(unreachableShuffleWorkers(unreachable)).toEqual(['sw-gone']);
  });

  it('a worker that shuts down under a stream answers UNAVAILABLE and keeps nothing', async () => {
    const closing = await startWorker('sw-closing');
    const writer = writerTo([closing], pid('closing'), 2);
    for (let i = 0; i < 3_000; i++) writer.emit(i % 2, record(i));
    await writer.flushIfNeeded();
    await waitFor(() => closing.metrics.bytesReceived > 0, 'the worker to receive blocks');
    await closing.store.close();
    const err = await writer.finish().catch((e: unknown) => e);
    expect((err as ReboundError).code).toBe(ErrorCode.UNAVAILABLE);
    expect((err as ReboundError).message).toMatch(/sw-closing.*shutting down/);
    expect(await partitionDirsOf(closing)).toEqual([]);
  });

  it('a producer killed mid-stream leaves nothing on the worker', async () => {
    const id = pid('killed');
    const before = three.metrics.bytesReceived;
    const writer = writerTo([three], id, 4);
    for (let i = 0; i < 5_000; i++) writer.emit(i % 4, record(i));
    await writer.flushIfNeeded();
    await waitFor(() => three.metrics.bytesReceived > before, 'the worker to receive blocks');
    expect(three.metrics.streamsActive).toBe(1);
    await writer.abort();
    await waitFor(() => three.metrics.streamsActive === 0, 'the worker to end the stream');
    expect(three.store.has(id)).toBe(false);
    expect(three.store.listFinished(JOB).map((p) => p.partition_id!.vertex_id)).not.toContain('killed');
    await waitFor(() => three.metrics.streamsFailed > 0, 'the stream to count as failed');
    await waitFor(async () => !(await partitionDirsOf(three)).includes('killed-0-0-e4'), 'the directory to go');

    // A producer whose call is cancelled before its commit, raw.
    const raw = rawWrite(
      three,
      [
        { open: { partition_id: pid('cancelled'), num_subpartitions: 1, read_capability: CAPABILITY } },
        { blocks: block(0, [1]) },
      ],
      false,
    );
    await waitFor(() => three.metrics.streamsActive === 1, 'the raw stream to start');
    raw.call.cancel();
    expect(await raw.result).toBeInstanceOf(ReboundError);
    await waitFor(() => three.metrics.streamsActive === 0, 'the worker to end the cancelled stream');
    await waitFor(async () => !(await partitionDirsOf(three)).includes('cancelled-0-0-e4'), 'the directory to go');
  });
});
