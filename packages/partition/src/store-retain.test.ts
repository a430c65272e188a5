import { mkdtemp, mkdir, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ResultPartitionId } from '@rebound/core';
import { decodeRecords } from './codec.js';
import { partitionDir, type PartitionIndexFile } from './format.js';
import { PartitionStore } from './store.js';

const JOB = '0123456789abcdef0123456789abcdef';
const OTHER = 'fedcba9876543210fedcba9876543210';

function pid(vertex: string, subtask = 0, job = JOB): ResultPartitionId {
  return { job_id: job, vertex_id: vertex, subtask, attempt: 0, epoch: 3 };
}

async function readRecords(
  store: PartitionStore,
  id: ResultPartitionId,
  start: number,
  end: number,
): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const block of store.openSubpartitionReader(id, start, end)) out.push(...decodeRecords(block));
  return out;
}

/** Writes a partition of `n` subpartitions and returns its records by subpartition. */
async function writePartition(
  store: PartitionStore,
  id: ResultPartitionId,
  n: number,
  records: number,
): Promise<unknown[][]> {
  const expected: unknown[][] = Array.from({ length: n }, () => []);
  const w = await store.createWriter(id, n);
  for (let i = 0; i < records; i++) {
    const sub = (i * 7) % n;
    const r = { i, v: `${id.vertex_id}-${i}`, pad: 'x'.repeat(i % 30) };
    w.emit(sub, r);
    expected[sub]!.push(r);
    if (i % 200 === 0) await w.flushIfNeeded();
  }
  await w.finish();
  return expected;
}

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-partition-retain-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('PartitionStore retainOnOpen (a shuffle worker)', () => {
  it('keeps finished partitions across a reopen, listed and read back exactly', async () => {
    const first = await PartitionStore.open({ dataDir, blockSize: 256, retainOnOpen: true });
    const a = await writePartition(first, pid('a'), 5, 3000);
    const b = await writePartition(first, pid('b', 2), 1, 10);
    const c = await writePartition(first, pid('a', 0, OTHER), 3, 500);
    const listed = first.listFinished();
    const stats = first.stats();
    await first.close();

    const second = await PartitionStore.open({ dataDir, blockSize: 256, retainOnOpen: true });
    expect(second.listFinished().sort((x, y) => x.total_bytes - y.total_bytes)).toEqual(
      listed.sort((x, y) => x.total_bytes - y.total_bytes),
    );
    expect(second.stats()).toEqual(stats);
    expect(second.jobsWithPartitions().sort()).toEqual([JOB, OTHER].sort());
    for (let s = 0; s < 5; s++) expect(await readRecords(second, pid('a'), s, s)).toEqual(a[s]);
    expect(await readRecords(second, pid('a'), 0, 4)).toEqual(a.flat());
    expect(await readRecords(second, pid('b', 2), 0, 0)).toEqual(b[0]);
    expect(await readRecords(second, pid('a', 0, OTHER), 1, 2)).toEqual(c.slice(1).flat());
    // A retained partition is an ordinary one: it can be released, and it cannot be written again.
    await expect(second.createWriter(pid('b', 2), 1)).rejects.toMatchObject({ code: 'ALREADY_EXISTS' });
    expect(await second.releaseJob(OTHER)).toBe(1);
    await second.close();

    const third = await PartitionStore.open({ dataDir, retainOnOpen: true });
    expect(
      third
        .listFinished()
        .map((p) => p.partition_id!.vertex_id)
        .sort(),
    ).toEqual(['a', 'b']);
    await third.close();
  });

  it('drops unfinished, truncated, inconsistent and foreign partitions, and keeps the rest', async () => {
    const first = await PartitionStore.open({ dataDir, blockSize: 128, retainOnOpen: true });
    await writePartition(first, pid('good'), 2, 400);
    for (const v of ['truncated', 'badjson', 'gap', 'moved', 'counts']) await writePartition(first, pid(v), 2, 400);
    const running = await first.createWriter(pid('unfinished'), 2);
    running.emit(0, 'never finished');
    await running.flushIfNeeded();
    // The process "dies" here: the unfinished writer is never aborted.

    const dirOf = (v: string): string => partitionDir(dataDir, pid(v));
    const indexOf = async (v: string): Promise<PartitionIndexFile> =>
      JSON.parse(await readFile(join(dirOf(v), 'index'), 'utf8')) as PartitionIndexFile;
    // A data file cut short (a torn disk write): its size no longer matches the index.
    const size = (await stat(join(dirOf('truncated'), 'data'))).size;
    await truncate(join(dirOf('truncated'), 'data'), size - 10);
    // A torn index.
    await writeFile(join(dirOf('badjson'), 'index'), '{"version": 1, "partit');
    // An index whose blocks do not cover the data.
    const gap = await indexOf('gap');
    const [, dropped] = gap.blocks[1]!.pop()!;
    gap.subpartitionBytes[1]! -= dropped - 16;
    await writeFile(join(dirOf('gap'), 'index'), JSON.stringify(gap));
    // An index that names another partition than its directory.
    const moved = await indexOf('moved');
    moved.partitionId.attempt = 9;
    await writeFile(join(dirOf('moved'), 'index'), JSON.stringify(moved));
    // Byte counts that do not add up.
    const counts = await indexOf('counts');
    counts.subpartitionBytes[0]! += 1;
    await writeFile(join(dirOf('counts'), 'index'), JSON.stringify(counts));
    // Stray files and directories.
    await writeFile(join(dataDir, 'partitions', 'stray-file'), 'x');
    await mkdir(join(dataDir, 'partitions', OTHER, 'v-0-0-e1'), { recursive: true });

    const second = await PartitionStore.open({ dataDir, blockSize: 128, retainOnOpen: true });
    expect(second.listFinished().map((p) => p.partition_id!.vertex_id)).toEqual(['good']);
    expect(await readRecords(second, pid('good'), 0, 1)).toHaveLength(400);
    expect(await readdir(join(dataDir, 'partitions'))).toEqual([JOB]);
    expect(await readdir(join(dataDir, 'partitions', JOB))).toEqual([
      partitionDir(dataDir, pid('good')).split('/').pop(),
    ]);
    await second.close();
  });

  it('a TaskManager store still wipes what a shuffle worker store would keep', async () => {
    const worker = await PartitionStore.open({ dataDir, retainOnOpen: true });
    await writePartition(worker, pid('a'), 1, 10);
    await worker.close();
    const tm = await PartitionStore.open({ dataDir });
    expect(tm.listFinished()).toEqual([]);
    expect(await readdir(join(dataDir, 'partitions'))).toEqual([]);
    await tm.close();
  });
});
