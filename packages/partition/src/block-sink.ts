import type { FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fsyncDir, writeFileAtomic } from '@rebound/core';
import { INDEX_FILE, type NormalizedPartitionId, type PartitionIndexFile } from './format.js';

/** Block locations of one subpartition, kept compact because finished partitions live long. */
export interface SubpartitionBlocks {
  offsets: Float64Array;
  lengths: Uint32Array;
}

/** What a writer wrote, wherever its blocks went: what the task reports as its IOMetrics. */
export interface WrittenPartition {
  id: NormalizedPartitionId;
  key: string;
  numSubpartitions: number;
  blocks: SubpartitionBlocks[];
  subpartitionBytes: number[];
  subpartitionRecords: number[];
  totalBytes: number;
  totalRecords: number;
  /** Length of the partition's data: blocks with their headers. */
  dataBytes: number;
  finishedAtMs: number;
}

/** A finished partition in a store's directory, as the store serves it. */
export interface FinishedPartition extends WrittenPartition {
  dir: string;
}

/**
 * Where a ResultPartitionWriter's sealed blocks go: the data file of a local partition, or the
 * shuffle workers of a remote one. The writer calls `append` one batch at a time, in order, and
 * never concurrently with `complete`; `abort` may come at any time.
 */
export interface BlockSink<R extends WrittenPartition> {
  /**
   * Takes whole blocks (headers filled in) that start at byte `position` of the partition's data.
   * When it resolves the sink is done with the buffers: the writer reuses them.
   */
  append(blocks: readonly Buffer[], position: number): Promise<void>;
  /** Every block was appended: make them durable together with the index. */
  complete(index: PartitionIndexFile, partition: WrittenPartition): Promise<R>;
  /** Stops: pending and later calls fail. Resolves once nothing is in progress any more. Idempotent. */
  abort(): Promise<void>;
  /** A failure the sink noticed by itself (a worker that went away while nothing was appended). */
  readonly failure?: unknown;
}

/**
 * The data file of a partition in a store's directory: what a TaskManager writes, and what a
 * shuffle worker writes the blocks it receives to. Blocks are appended with positional writev.
 */
export class LocalFileSink implements BlockSink<FinishedPartition> {
  private op: Promise<unknown> | undefined;
  private closed = false;

  constructor(
    private readonly dir: string,
    private readonly fh: FileHandle,
    /** Also fsync the job's and the store's directories at finish (a store that keeps partitions across restarts). */
    private readonly syncParentDir: boolean,
  ) {}

  async append(blocks: readonly Buffer[], position: number): Promise<void> {
    const op = writevFully(this.fh, blocks, position);
    this.op = op;
    try {
      await op;
    } finally {
      if (this.op === op) this.op = undefined;
    }
  }

  async complete(index: PartitionIndexFile, partition: WrittenPartition): Promise<FinishedPartition> {
    const op = this.completeFiles(index);
    this.op = op;
    try {
      await op;
    } finally {
      if (this.op === op) this.op = undefined;
    }
    return { ...partition, dir: this.dir };
  }

  async abort(): Promise<void> {
    // The handle may only close once no write uses it.
    if (this.op) await this.op.catch(() => {});
    await this.close();
  }

  private async completeFiles(index: PartitionIndexFile): Promise<void> {
    await this.fh.sync();
    await this.close();
    // writeFileAtomic fsyncs the partition's directory, which makes `data` durable too.
    await writeFileAtomic(join(this.dir, INDEX_FILE), JSON.stringify(index));
    if (this.syncParentDir) {
      // The partition's directory entry, and its job's when the job is new here.
      await fsyncDir(dirname(this.dir));
      await fsyncDir(dirname(dirname(this.dir)));
    }
  }

  private async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.fh.close().catch(() => {});
  }
}

async function writevFully(fh: FileHandle, buffers: readonly Buffer[], position: number): Promise<void> {
  let pending = buffers;
  let pos = position;
  for (;;) {
    const total = pending.reduce((n, b) => n + b.length, 0);
    const { bytesWritten } = await fh.writev(pending as Buffer[], pos);
    if (bytesWritten >= total) return;
    // Short write: drop what went out and go on with the rest.
    pos += bytesWritten;
    let skip = bytesWritten;
    const rest: Buffer[] = [];
    for (const b of pending) {
      if (skip >= b.length) {
        skip -= b.length;
      } else {
        rest.push(skip > 0 ? b.subarray(skip) : b);
        skip = 0;
      }
    }
    pending = rest;
  }
}
