import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  bindServer,
  ErrorCode,
  loadProto,
  PermissionDeniedError,
  ReboundError,
  shutdownServer,
  silentLogger,
  type PartitionWriteAck__Output,
  type PartitionWriteMessage,
  type PartitionWriteMessage__Output,
  type PartitionWriteAck,
  type ResultPartitionId,
} from '@rebound/core';
import { readRemoteSubpartitions } from './client.js';
import { PartitionClientPool, ShuffleWorkerClientPool } from './client-pool.js';
import { encodeRecords } from './codec.js';
import {
  BLOCK_HEADER_BYTES,
  INDEX_VERSION,
  partitionDir,
  writeBlockHeader,
  type PartitionIndexFile,
} from './format.js';
import { createShuffleIngestHandler, newShuffleIngestMetrics, type ShuffleIngestMetrics } from './ingest.js';
import {
  ShuffleWorkerUnreachableError,
  createRemotePartitionWriter,
  unreachableShuffleWorkers,
} from './remote-sink.js';
import { createPartitionServiceHandlers } from './service.js';
import { PartitionStore } from './store.js';

const JOB = 'abcdefabcdefabcdefabcdefabcdef01';
const CAPABILITY = 'read-cap-of-the-job';

interface Worker {
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
const shuffleClients = new ShuffleWorkerClientPool();
const partitionClients = new PartitionClientPool();

/** A shuffle worker as far as the data plane goes: the ingest and the PartitionService on one server. */
async function startWorker(
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

async function waitFor(cond: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

function pid(vertex: string, subtask = 0): ResultPartitionId {
  return { job_id: JOB, vertex_id: vertex, subtask, attempt: 0, epoch: 4 };
}

function record(i: number): unknown {
  return { i, word: `w${i % 331}`, pad: 'p'.repeat(20 + (i % 60)) };
}

async function collect(it: AsyncIterable<unknown[]>): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const batch of it) out.push(...batch);
  return out;
}

function writerTo(targets: Worker[], id: ResultPartitionId, n: number, timeoutMs = 10_000) {
  return createRemotePartitionWriter(
    id,
    n,
    targets.map((w) => ({ worker_id: w.id, address: w.address })),
    { clients: shuffleClients, readCapability: CAPABILITY, timeoutMs, blockSize: 1024 },
  );
}

/** Writes `count` records through a remote writer; returns them by subpartition. */
async function produce(targets: Worker[], id: ResultPartitionId, n: number, count: number) {
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
function block(sub: number, records: unknown[]): Buffer {
  const payload = encodeRecords(records);
  const b = Buffer.alloc(BLOCK_HEADER_BYTES + payload.length);
  payload.copy(b, BLOCK_HEADER_BYTES);
  writeBlockHeader(b, sub, payload.length, records.length);
  return b;
}

/** The index a correct producer commits for `blocks` written in this order. */
function indexFor(id: ResultPartitionId, n: number, blocks: Buffer[]): PartitionIndexFile {
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
function rawWrite(
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
      if (err) {
        const code = err.metadata?.get('rebound-error-code')?.[0];
        resolve(new ReboundError((code as ErrorCode) ?? ErrorCode.INTERNAL, err.details));
      } else resolve(ack!);
    });
  });
  call.on('error', () => {});
  for (const m of messages) call.write(m);
  if (end) call.end();
  return { result, call };
}

async function partitionDirsOf(w: Worker): Promise<string[]> {
  return readdir(join(w.dataDir, 'partitions', JOB)).catch(() => []);
}

let one: Worker;
let two: Worker;
let three: Worker;
beforeAll(async () => {
  one = await startWorker('sw-1');
  two = await startWorker('sw-2');
  three = await startWorker('sw-3');
});
afterEach(() => {
  for (const w of workers) w.admitted.length = 0;
});
afterAll(async () => {
  shuffleClients.close();
  partitionClients.close();
  await Promise.all(workers.map((w) => w.stop()));
});

describe('remote partition writer and shuffle ingest', () => {
  it('writes a partition to one worker, which serves it back exactly', async () => {
    const id = pid('one');
    const n = 6;
    const { expected, finished } = await produce([one], id, n, 20_000);
    expect(finished.workers).toEqual([{ worker_id: 'sw-1', address: one.address, total_bytes: finished.dataBytes }]);
    expect(finished.totalRecords).toBe(20_000);
    expect(one.admitted).toEqual([[JOB, CAPABILITY]]);
    const [listed] = one.store.listFinished(JOB).filter((p) => p.partition_id!.vertex_id === 'one');
    expect(listed!.total_bytes).toBe(finished.totalBytes);
    expect(one.store.get(id)!.subpartitionBytes).toEqual(finished.subpartitionBytes);
    const client = partitionClients.get(one.address);
    expect(await collect(readRemoteSubpartitions(client, id, 0, n - 1, { timeoutMs: 5_000 }))).toEqual(expected.flat());
    expect(await collect(readRemoteSubpartitions(client, id, 2, 3, { timeoutMs: 5_000 }))).toEqual(
      expected.slice(2, 4).flat(),
    );
    // The producing side registered nothing anywhere else.
    expect(two.store.has(id)).toBe(false);
  });

  it('writes the same blocks to two workers', async () => {
    const id = pid('two');
    const { expected } = await produce([one, two], id, 3, 8_000);
    for (const w of [one, two]) {
      expect(w.admitted).toEqual([[JOB, CAPABILITY]]);
      const client = partitionClients.get(w.address);
      expect(await collect(readRemoteSubpartitions(client, id, 0, 2, { timeoutMs: 5_000 }))).toEqual(expected.flat());
    }
    const dataOf = (w: Worker): Promise<Buffer> => readFile(join(partitionDir(w.dataDir, id), 'data'));
    expect((await dataOf(one)).equals(await dataOf(two))).toBe(true);
    // Skipping blocks a consumer already took from the other copy resumes exactly.
    const blocks = one.store.get(id)!.blocks.reduce((s, b) => s + b.offsets.length, 0);
    const firstBlocks: unknown[] = [];
    let taken = 0;
    for await (const batch of readRemoteSubpartitions(partitionClients.get(one.address), id, 0, 2, {
      timeoutMs: 5_000,
    })) {
      firstBlocks.push(...batch);
      if (++taken === Math.floor(blocks / 2)) break;
    }
    const rest = await collect(
      readRemoteSubpartitions(partitionClients.get(two.address), id, 0, 2, { timeoutMs: 5_000, skipBlocks: taken }),
    );
    expect([...firstBlocks, ...rest]).toEqual(expected.flat());
  });

  it('refuses a commit whose index disagrees with the data, and keeps nothing', async () => {
    const blocks = [block(0, [1, 2, 3]), block(1, ['a']), block(0, [4])];
    const n = 2;
    const cases: Array<[string, (index: PartitionIndexFile) => void, RegExp]> = [
      ['bytes', (ix) => (ix.dataBytes += 1), /cover \d+ bytes but dataBytes/],
      ['order', (ix) => ix.blocks[0]!.reverse(), /not in write order/],
      ['records', (ix) => (ix.subpartitionRecords[1] = 5), /records of subpartition 1: 5 committed, 1 received/],
      [
        'subpartitions',
        (ix) => {
          ix.numSubpartitions = 3;
          ix.blocks.push([]);
          ix.subpartitionBytes.push(0);
          ix.subpartitionRecords.push(0);
        },
        /subpartitions: 3 committed, 2 received/,
      ],
      [
        'layout',
        (ix) => {
          // Swap which subpartition the second block belongs to: consistent in itself, wrong for the data.
          const moved = ix.blocks[1]!.pop()!;
          ix.blocks[0]!.splice(1, 0, moved);
          ix.subpartitionBytes[0]! += moved[1] - BLOCK_HEADER_BYTES;
          ix.subpartitionBytes[1] = 0;
        },
        /blocks of subpartition 0: 3 committed, 2 received/,
      ],
      ['json', () => undefined, /not JSON/],
    ];
    for (const [name, corrupt, message] of cases) {
      const id = pid(`bad-${name}`);
      const index = indexFor(id, n, blocks);
      corrupt(index);
      const { result } = rawWrite(one, [
        { open: { partition_id: id, num_subpartitions: n, read_capability: CAPABILITY } },
        { blocks: Buffer.concat(blocks.slice(0, 2)) },
        { blocks: blocks[2]! },
        { commit: { index_json: name === 'json' ? '{"version":' : JSON.stringify(index) } },
      ]);
      const err = (await result) as ReboundError;
      expect(err, name).toBeInstanceOf(ReboundError);
      expect(err.code, name).toBe(ErrorCode.INVALID_ARGUMENT);
      expect(err.message, name).toMatch(message);
      expect(one.store.has(id)).toBe(false);
    }
    await waitFor(() => one.metrics.streamsActive === 0, 'the streams to end');
    await waitFor(
      async () => (await partitionDirsOf(one)).every((d) => !d.startsWith('bad-')),
      'the refused partitions to be deleted',
    );

    // The same blocks with the right index are accepted: the cases above failed for their reason.
    const id = pid('good-raw');
    const { result } = rawWrite(one, [
      { open: { partition_id: id, num_subpartitions: n, read_capability: CAPABILITY } },
      { blocks: Buffer.concat(blocks) },
      { commit: { index_json: JSON.stringify(indexFor(id, n, blocks)) } },
    ]);
    const ack = (await result) as PartitionWriteAck__Output;
    expect(ack).toEqual({ worker_id: 'sw-1', total_bytes: blocks.reduce((s, b) => s + b.length, 0) });
    expect(
      await collect(readRemoteSubpartitions(partitionClients.get(one.address), id, 0, 1, { timeoutMs: 5_000 })),
    ).toEqual([1, 2, 3, 4, 'a']);
  });

  it('refuses malformed streams, duplicates and writers the worker does not admit', async () => {
    const id = pid('malformed');
    const open = { open: { partition_id: id, num_subpartitions: 2, read_capability: CAPABILITY } };
    const whole = block(0, ['x', 'y']);
    const cases: Array<[string, PartitionWriteMessage[], ErrorCode, RegExp]> = [
      ['cut block', [open, { blocks: whole.subarray(0, whole.length - 1) }], ErrorCode.INVALID_ARGUMENT, /cut off/],
      ['short header', [open, { blocks: whole.subarray(0, 10) }], ErrorCode.INVALID_ARGUMENT, /whole block header/],
      ['subpartition', [open, { blocks: block(2, [1]) }], ErrorCode.INVALID_ARGUMENT, /subpartition 2/],
      ['blocks first', [{ blocks: whole }], ErrorCode.INVALID_ARGUMENT, /blocks before open/],
      ['no commit', [open, { blocks: whole }], ErrorCode.INVALID_ARGUMENT, /ended without a commit/],
      ['two opens', [open, open], ErrorCode.INVALID_ARGUMENT, /second open/],
      ['empty', [{}], ErrorCode.INVALID_ARGUMENT, /without open, blocks or commit/],
      [
        'unsafe id',
        [{ open: { ...open.open, partition_id: { ...id, vertex_id: '../x' } } }],
        ErrorCode.ILLEGAL_STATE,
        /cannot name/,
      ],
    ];
    for (const [name, messages, code, message] of cases) {
      const err = (await rawWrite(one, messages).result) as ReboundError;
      expect(err, name).toBeInstanceOf(ReboundError);
      expect(err.code, name).toBe(code);
      expect(err.message, name).toMatch(message);
      expect(one.store.has(id), name).toBe(false);
    }
    await waitFor(() => one.metrics.streamsActive === 0, 'the streams to end');
    await waitFor(async () => !(await partitionDirsOf(one)).includes('malformed-0-0-e4'), 'the directory to go');

    // A second write of a finished partition is refused, and leaves the first copy alone.
    const { expected } = await produce([two], pid('dup'), 2, 100);
    const again = await writerTo([two], pid('dup'), 2)
      .finish()
      .catch((e: unknown) => e);
    expect((again as ReboundError).code).toBe(ErrorCode.ALREADY_EXISTS);
    expect(
      await collect(readRemoteSubpartitions(partitionClients.get(two.address), pid('dup'), 0, 1, { timeoutMs: 5_000 })),
    ).toEqual(expected.flat());

    // A worker that does not admit the writer ends the call with the rejection's code.
    const picky = await startWorker('sw-picky', async () => {
      throw new PermissionDeniedError('not the read capability this worker knows for the job');
    });
    const refused = await writerTo([picky], pid('refused'), 1)
      .finish()
      .catch((e: unknown) => e);
    expect((refused as ReboundError).code).toBe(ErrorCode.PERMISSION_DENIED);
    expect((refused as ReboundError).message).toMatch(/sw-picky.*not the read capability/);
    await waitFor(async () => (await partitionDirsOf(picky)).length === 0, 'nothing to be on the picky worker');
  });

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
