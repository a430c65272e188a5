import { mkdtemp, mkdir, open, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorCode,
  PartitionNotFoundError,
  ReboundError,
  packSubpartitionBytes,
  unpackSubpartitionBytes,
  type ResultPartitionId,
} from '@rebound/core';
import { decodeRecords, encodeRecord } from './codec.js';
import { BLOCK_HEADER_BYTES, PartitionCorruptError, partitionDir, type PartitionIndexFile } from './format.js';
import { PartitionStore } from './store.js';
import { readLocalSubpartitions } from './client.js';

const JOB = '0123456789abcdef0123456789abcdef';

function pid(vertex: string, subtask = 0, attempt = 0, job = JOB, epoch = 2): ResultPartitionId {
  return { job_id: job, vertex_id: vertex, subtask, attempt, epoch };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function readRecords(
  store: PartitionStore,
  id: ResultPartitionId,
  start: number,
  end: number,
): Promise<unknown[]> {
  const blocks = await collect(store.openSubpartitionReader(id, start, end));
  return blocks.flatMap((b) => decodeRecords(b));
}

/** A skewed key distribution: half the records to subpartition 0, the rest spread. */
function skewedSubpartition(i: number, n: number): number {
  if (i % 2 === 0) return 0;
  return (i * 2654435761) % n;
}

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-partition-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('PartitionStore', () => {
  it('round-trips many subpartitions with skewed keys, in order, by subpartition and by range', async () => {
    const store = await PartitionStore.open({ dataDir, blockSize: 1024 });
    const n = 37;
    const id = pid('map', 3, 1);
    const writer = await store.createWriter(id, n);
    const expected: unknown[][] = Array.from({ length: n }, () => []);
    for (let i = 0; i < 20_000; i++) {
      const sub = skewedSubpartition(i, n);
      const record = i % 5 === 0 ? { k: `key-${i}`, v: [i, 'ü'] } : ['w', i];
      writer.emit(sub, record);
      expected[sub]!.push(record);
      if (i % 1000 === 0) await writer.flushIfNeeded();
    }
    const finished = await writer.finish();
    expect(finished.totalRecords).toBe(20_000);
    expect(store.has(id)).toBe(true);

    for (let s = 0; s < n; s++) expect(await readRecords(store, id, s, s)).toEqual(expected[s]);
    expect(await readRecords(store, id, 0, n - 1)).toEqual(expected.flat());
    expect(await readRecords(store, id, 5, 11)).toEqual(expected.slice(5, 12).flat());
    expect(await collect(readLocalSubpartitions(store, id, 5, 11)).then((b) => b.flat())).toEqual(
      expected.slice(5, 12).flat(),
    );

    const [listed] = store.listFinished(JOB);
    expect(listed!.partition_id).toEqual(id);
    expect(listed!.num_subpartitions).toBe(n);
    const bytes = expected.map((recs) =>
      recs.reduce<number>((sum, r, i) => sum + Buffer.byteLength(encodeRecord(r)) + (i > 0 ? 1 : 0), 0),
    );
    // Payload bytes per subpartition: records plus separators inside each block.
    const perSubpartition = unpackSubpartitionBytes(listed!.packed_subpartition_bytes);
    for (let s = 0; s < n; s++) {
      expect(perSubpartition[s]).toBeLessThanOrEqual(bytes[s]!);
      expect(perSubpartition[s]).toBeGreaterThanOrEqual(bytes[s]! - finished.blocks[s]!.offsets.length);
    }
    expect(listed!.total_bytes).toBe(perSubpartition.reduce((a, b) => a + b, 0));

    // The index is the documented JSON and the data file holds exactly the blocks.
    const dir = partitionDir(dataDir, id);
    expect(dir).toBe(join(dataDir, 'partitions', JOB, 'map-3-1-e2'));
    const index = JSON.parse(await readFile(join(dir, 'index'), 'utf8')) as PartitionIndexFile;
    expect(index.numSubpartitions).toBe(n);
    expect(index.subpartitionRecords.reduce((a, b) => a + b, 0)).toBe(20_000);
    expect(index.blocks[0]!.length).toBeGreaterThan(1);
    expect((await stat(join(dir, 'data'))).size).toBe(index.dataBytes);
    await store.close();
  });

  it('rejects ranges outside the partition', async () => {
    const store = await PartitionStore.open({ dataDir });
    const writer = await store.createWriter(pid('v'), 4);
    writer.emit(1, 'x');
    await writer.finish();
    expect(() => store.openSubpartitionReader(pid('v'), 2, 4)).toThrow(/not within the 4 subpartitions/);
    expect(() => store.openSubpartitionReader(pid('v'), 3, 2)).toThrow(ReboundError);
    // Empty subpartitions are valid and empty.
    expect(await readRecords(store, pid('v'), 2, 3)).toEqual([]);
    await store.close();
  });

  it('keeps buffered bytes within numSubpartitions × blockSize + one record', async () => {
    const blockSize = 512;
    const n = 16;
    const store = await PartitionStore.open({ dataDir, blockSize });
    const writer = await store.createWriter(pid('bounded'), n);
    let maxRecord = 0;
    let maxBuffered = 0;
    let maxQueued = 0;
    const expected: unknown[][] = Array.from({ length: n }, () => []);
    for (let i = 0; i < 15_000; i++) {
      // Mostly small records, some larger than a whole block.
      const record = i % 997 === 0 ? 'L'.repeat(3 * blockSize) : { i, s: 'x'.repeat(i % 50) };
      maxRecord = Math.max(maxRecord, Buffer.byteLength(encodeRecord(record)));
      const sub = skewedSubpartition(i, n);
      writer.emit(sub, record);
      expected[sub]!.push(record);
      // Checked after every record; expect() per record would dominate the test's time.
      if (writer.bufferedBytes > n * blockSize + maxRecord)
        throw new Error(`${writer.bufferedBytes} bytes buffered after record ${i}`);
      maxBuffered = Math.max(maxBuffered, writer.bufferedBytes);
      if (i % 100 === 0) {
        await writer.flushIfNeeded();
        maxQueued = Math.max(maxQueued, writer.queuedBytes);
      }
    }
    expect(maxBuffered).toBeGreaterThan(blockSize);
    expect(maxBuffered).toBeLessThanOrEqual(n * blockSize + maxRecord);
    expect(maxQueued).toBeLessThanOrEqual(4 * (blockSize + BLOCK_HEADER_BYTES));
    await writer.finish();
    expect(await readRecords(store, pid('bounded'), 0, n - 1)).toEqual(expected.flat());
    await store.close();
  });

  it('detects a corrupted block with a typed error and stops reporting the partition', async () => {
    const store = await PartitionStore.open({ dataDir, blockSize: 256 });
    const id = pid('corrupt');
    const writer = await store.createWriter(id, 2);
    for (let i = 0; i < 500; i++) writer.emit(i % 2, { i });
    await writer.finish();
    const dataFile = join(partitionDir(dataDir, id), 'data');
    const size = (await stat(dataFile)).size;
    const fh = await open(dataFile, 'r+');
    const pos = Math.floor(size / 2);
    const byte = Buffer.alloc(1);
    await fh.read(byte, 0, 1, pos);
    byte[0] = byte[0]! ^ 0x20;
    await fh.write(byte, 0, 1, pos);
    await fh.close();

    const err = await readRecords(store, id, 0, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PartitionCorruptError);
    expect(err).toBeInstanceOf(PartitionNotFoundError);
    expect((err as ReboundError).code).toBe(ErrorCode.PARTITION_NOT_FOUND);
    expect(store.metrics.corruptBlocks).toBe(1);
    expect(store.has(id)).toBe(false);
    expect(store.listFinished()).toEqual([]);
    await store.close();
  });

  it('neither lists nor serves unfinished partitions, and aborting deletes them', async () => {
    const store = await PartitionStore.open({ dataDir });
    const id = pid('running');
    const writer = await store.createWriter(id, 3);
    writer.emit(0, 'a');
    await writer.flushIfNeeded();
    expect(store.has(id)).toBe(false);
    expect(store.listFinished()).toEqual([]);
    expect(() => store.openSubpartitionReader(id, 0, 0)).toThrow(/still being written/);
    await writer.abort();
    expect(() => writer.emit(0, 'b')).toThrow(/takes no more records/);
    await store.close();
    await expect(stat(partitionDir(dataDir, id))).rejects.toThrow(/ENOENT/);
  });

  it('wipes partitions left by an earlier TaskManager process on open', async () => {
    const old = join(dataDir, 'partitions', JOB, 'v-0-0-e2');
    await mkdir(old, { recursive: true });
    await writeFile(join(old, 'data'), 'x');
    await writeFile(join(old, 'index'), '{}');
    const store = await PartitionStore.open({ dataDir });
    expect(await readdir(join(dataDir, 'partitions'))).toEqual([]);
    expect(store.listFinished()).toEqual([]);
    expect(() => store.openSubpartitionReader(pid('v'), 0, 0)).toThrow(PartitionNotFoundError);
    await store.close();
  });

  it('release deletes files; releaseJob releases finished and running partitions of that job only', async () => {
    const other = 'fedcba9876543210fedcba9876543210';
    const store = await PartitionStore.open({ dataDir });
    for (const id of [pid('a'), pid('b'), pid('a', 0, 0, other)]) {
      const w = await store.createWriter(id, 2);
      w.emit(0, 1);
      await w.finish();
    }
    const running = await store.createWriter(pid('c'), 2);
    expect(store.listFinished()).toHaveLength(3);
    expect(store.listFinished(other)).toHaveLength(1);

    expect(await store.release([pid('a'), pid('nope')])).toBe(1);
    expect(store.has(pid('a'))).toBe(false);
    await expect(stat(partitionDir(dataDir, pid('a')))).rejects.toThrow(/ENOENT/);
    expect(() => store.openSubpartitionReader(pid('a'), 0, 0)).toThrow(PartitionNotFoundError);

    expect(await store.releaseJob(JOB)).toBe(2);
    expect(() => running.emit(0, 'late')).toThrow(/released or aborted/);
    await expect(running.finish()).rejects.toThrow(ReboundError);
    expect(store.listFinished()).toEqual([
      {
        partition_id: pid('a', 0, 0, other),
        num_subpartitions: 2,
        total_bytes: 1,
        packed_subpartition_bytes: packSubpartitionBytes([1, 0]),
      },
    ]);
    await expect(stat(join(dataDir, 'partitions', JOB))).rejects.toThrow(/ENOENT/);
    expect(await readdir(join(dataDir, 'partitions', other))).toEqual(['a-0-0-e2']);
    await store.close();
  });

  it('keeps the partitions of equal attempt numbers deployed by different leaders apart', async () => {
    // A leader that lost the tail of the event log reruns a subtask with an attempt number its
    // predecessor already used; the retained old partition must not be overwritten or confused.
    const store = await PartitionStore.open({ dataDir });
    const old = await store.createWriter(pid('src', 1, 0, JOB, 3), 1);
    old.emit(0, 'from epoch 3');
    await old.finish();
    const rerun = await store.createWriter(pid('src', 1, 0, JOB, 4), 1);
    rerun.emit(0, 'from epoch 4');
    await rerun.finish();
    expect(await readRecords(store, pid('src', 1, 0, JOB, 3), 0, 0)).toEqual(['from epoch 3']);
    expect(await readRecords(store, pid('src', 1, 0, JOB, 4), 0, 0)).toEqual(['from epoch 4']);
    expect(await store.release([pid('src', 1, 0, JOB, 3)])).toBe(1);
    expect(store.listFinished(JOB).map((p) => p.partition_id)).toEqual([pid('src', 1, 0, JOB, 4)]);
    await store.close();
  });

  it('refuses a second writer for the same attempt and ids that cannot name a directory', async () => {
    const store = await PartitionStore.open({ dataDir });
    await store.createWriter(pid('v'), 1);
    await expect(store.createWriter(pid('v'), 1)).rejects.toThrow(/already exists/);
    await expect(store.createWriter(pid('../escape'), 1)).rejects.toThrow(/cannot name a partition directory/);
    await expect(store.createWriter(pid('w'), 0)).rejects.toThrow(/at least one subpartition/);
    await store.close();
  });

  it('a reader that stops early does not hold the partition', async () => {
    const store = await PartitionStore.open({ dataDir, blockSize: 128 });
    const id = pid('early');
    const w = await store.createWriter(id, 1);
    for (let i = 0; i < 1000; i++) w.emit(0, i);
    await w.finish();
    for await (const block of store.openSubpartitionReader(id, 0, 0)) {
      expect(decodeRecords(block)[0]).toBe(0);
      break;
    }
    // One block consumed plus one read ahead, not the whole partition.
    expect(store.metrics.blocksRead).toBe(2);
    expect(await store.release([id])).toBe(1);
    await store.close();
  });
});
