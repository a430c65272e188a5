import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  PermissionDeniedError,
  ReboundError,
  type PartitionWriteAck__Output,
  type PartitionWriteMessage,
} from '@rebound/core';
import { readRemoteSubpartitions } from './client.js';
import { BLOCK_HEADER_BYTES, partitionDir, type PartitionIndexFile } from './format.js';
import {
  CAPABILITY,
  JOB,
  block,
  collect,
  forgetAdmissions,
  indexFor,
  one,
  partitionClients,
  partitionDirsOf,
  pid,
  produce,
  rawWrite,
  startWorker,
  startWorkers,
  stopWorkers,
  two,
  waitFor,
  writerTo,
  type Worker,
} from './shuffle-ingest.test-util.js';

beforeAll(startWorkers);
afterEach(forgetAdmissions);
afterAll(stopWorkers);

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
});
