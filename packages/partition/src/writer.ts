import type { FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { IllegalStateError, ReboundError, writeFileAtomic, errorMessage, InternalError } from '@rebound/core';
import { encodeRecord, RECORD_SEPARATOR } from './codec.js';
import {
  BLOCK_HEADER_BYTES,
  INDEX_FILE,
  INDEX_VERSION,
  type NormalizedPartitionId,
  type PartitionIndexFile,
  writeBlockHeader,
} from './format.js';

/** Block locations of one subpartition, kept compact because finished partitions live long. */
export interface SubpartitionBlocks {
  offsets: Float64Array;
  lengths: Uint32Array;
}

/** A finished partition as the store knows it. */
export interface FinishedPartition {
  id: NormalizedPartitionId;
  key: string;
  dir: string;
  numSubpartitions: number;
  blocks: SubpartitionBlocks[];
  subpartitionBytes: number[];
  subpartitionRecords: number[];
  totalBytes: number;
  totalRecords: number;
  finishedAtMs: number;
}

export interface ResultPartitionWriterOptions {
  /** Payload bytes per block (`taskmanager.network.block-size`). */
  blockSize: number;
  /**
   * `flushIfNeeded()` waits for the disk once more than this many blocks' worth of bytes are
   * queued for writing; it bounds the memory of sealed blocks waiting for the disk.
   */
  maxQueuedBlocks: number;
  clock: () => number;
}

/** What the writer needs from its store (kept narrow so the writer can be tested alone). */
export interface WriterHost {
  onFinished(writer: ResultPartitionWriter, partition: FinishedPartition): void;
  onClosed(writer: ResultPartitionWriter): void;
}

type State = 'open' | 'finishing' | 'finished' | 'aborted';

// Large writev batches buy nothing and some platforms cap the iovec count.
const MAX_WRITEV_BUFFERS = 128;

/**
 * Writes one blocking result partition: records go to a per-subpartition in-memory buffer, each
 * full buffer is sealed as a block and appended to the data file in the background. Memory is
 * bounded by numSubpartitions × blockSize of open buffers (plus one oversized record, which gets
 * a block of its own) and by the write queue, which the task drains with `flushIfNeeded()`.
 */
export class ResultPartitionWriter {
  readonly key: string;
  private state: State = 'open';
  private readonly buffers: Array<Buffer | undefined>;
  private readonly fill: Uint32Array;
  private readonly bufferRecords: Uint32Array;
  private readonly subBytes: number[];
  private readonly subRecords: number[];
  private readonly blockOffsets: number[][];
  private readonly blockLengths: number[][];
  private readonly freeBuffers: Buffer[] = [];
  private buffered = 0;
  private fileOffset = 0;
  private writtenOffset = 0;
  private queue: Buffer[] = [];
  private queued = 0;
  private draining: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    readonly id: NormalizedPartitionId,
    readonly numSubpartitions: number,
    readonly dir: string,
    private readonly fh: FileHandle,
    private readonly host: WriterHost,
    private readonly options: ResultPartitionWriterOptions,
    key: string,
  ) {
    this.key = key;
    this.buffers = new Array<Buffer | undefined>(numSubpartitions);
    this.fill = new Uint32Array(numSubpartitions);
    this.bufferRecords = new Uint32Array(numSubpartitions);
    this.subBytes = new Array<number>(numSubpartitions).fill(0);
    this.subRecords = new Array<number>(numSubpartitions).fill(0);
    this.blockOffsets = Array.from({ length: numSubpartitions }, () => []);
    this.blockLengths = Array.from({ length: numSubpartitions }, () => []);
  }

  /** Payload bytes held in open (unsealed) subpartition buffers. */
  get bufferedBytes(): number {
    return this.buffered;
  }

  /** Bytes of sealed blocks not yet written to the data file. */
  get queuedBytes(): number {
    return this.queued;
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Appends a record to a subpartition. Synchronous and cheap; disk writes happen in the background. */
  emit(subpartition: number, record: unknown): void {
    if (this.state !== 'open') throw this.notOpen();
    if (this.failure !== undefined) throw this.writeFailure();
    if (!(subpartition >= 0 && subpartition < this.numSubpartitions) || !Number.isInteger(subpartition)) {
      throw new IllegalStateError(
        `subpartition ${subpartition} out of range [0, ${this.numSubpartitions}) of partition ${this.key}`,
      );
    }
    const text = encodeRecord(record);
    const blockSize = this.options.blockSize;
    let fill = this.fill[subpartition]!;
    let sep = fill > 0 ? 1 : 0;
    // A UTF-16 code unit never takes more than 3 UTF-8 bytes: the exact length is only needed
    // near the end of a buffer.
    if (fill + sep + text.length * 3 > blockSize) {
      const len = Buffer.byteLength(text, 'utf8');
      if (fill + sep + len > blockSize) {
        if (fill > 0) this.seal(subpartition);
        fill = 0;
        sep = 0;
        if (len > blockSize) {
          const block = Buffer.allocUnsafeSlow(BLOCK_HEADER_BYTES + len);
          block.write(text, BLOCK_HEADER_BYTES, 'utf8');
          this.subRecords[subpartition]! += 1;
          this.appendBlock(subpartition, block, len, 1);
          return;
        }
      }
    }
    let buf = this.buffers[subpartition];
    if (buf === undefined) {
      buf = this.freeBuffers.pop() ?? Buffer.allocUnsafeSlow(BLOCK_HEADER_BYTES + blockSize);
      this.buffers[subpartition] = buf;
    }
    let pos = BLOCK_HEADER_BYTES + fill;
    if (sep) buf[pos++] = RECORD_SEPARATOR;
    pos += buf.write(text, pos, 'utf8');
    const newFill = pos - BLOCK_HEADER_BYTES;
    this.buffered += newFill - fill;
    this.fill[subpartition] = newFill;
    this.bufferRecords[subpartition]! += 1;
    this.subRecords[subpartition]! += 1;
  }

  /**
   * Backpressure point: the task calls this between batches. Resolves at once unless more than
   * `maxQueuedBlocks` blocks are waiting for the disk.
   */
  async flushIfNeeded(): Promise<void> {
    if (this.failure !== undefined) throw this.writeFailure();
    while (this.queued > this.options.maxQueuedBlocks * this.options.blockSize && this.draining) {
      await this.draining;
    }
    if (this.failure !== undefined) throw this.writeFailure();
  }

  /**
   * Seals all buffers, makes the data durable and writes the index, which is what turns the
   * directory into a finished partition. Returns the partition as the store now serves it.
   */
  async finish(): Promise<FinishedPartition> {
    if (this.state !== 'open') throw this.notOpen();
    this.state = 'finishing';
    try {
      for (let s = 0; s < this.numSubpartitions; s++) {
        if (this.fill[s]! > 0) this.seal(s);
      }
      this.buffers.fill(undefined);
      this.freeBuffers.length = 0;
      if (this.draining) await this.draining;
      if (this.failure !== undefined) throw this.writeFailure();
      if ((this.state as State) !== 'finishing') throw this.notOpen();
      await this.fh.sync();
      await this.fh.close();
      const finishedAtMs = this.options.clock();
      const index: PartitionIndexFile = {
        version: INDEX_VERSION,
        partitionId: this.id,
        numSubpartitions: this.numSubpartitions,
        dataBytes: this.fileOffset,
        blocks: this.blockOffsets.map((offs, s) =>
          offs.map((o, i): [number, number] => [o, this.blockLengths[s]![i]!]),
        ),
        subpartitionBytes: this.subBytes,
        subpartitionRecords: this.subRecords,
        finishedAtMs,
      };
      // A release that raced with us wins: the state check below drops the partition again.
      await writeFileAtomic(join(this.dir, INDEX_FILE), JSON.stringify(index));
      if ((this.state as State) !== 'finishing') throw this.notOpen();
      this.state = 'finished';
      const partition: FinishedPartition = {
        id: this.id,
        key: this.key,
        dir: this.dir,
        numSubpartitions: this.numSubpartitions,
        blocks: this.blockOffsets.map((offs, s) => ({
          offsets: Float64Array.from(offs),
          lengths: Uint32Array.from(this.blockLengths[s]!),
        })),
        subpartitionBytes: [...this.subBytes],
        subpartitionRecords: [...this.subRecords],
        totalBytes: this.subBytes.reduce((a, b) => a + b, 0),
        totalRecords: this.subRecords.reduce((a, b) => a + b, 0),
        finishedAtMs,
      };
      this.host.onFinished(this, partition);
      return partition;
    } catch (err) {
      if (this.state === 'finishing') this.state = 'aborted';
      await this.fh.close().catch(() => {});
      this.host.onClosed(this);
      throw err;
    }
  }

  /**
   * Stops writing and lets the store delete the files (task failed or was cancelled, or the
   * partition was released while being written). Idempotent.
   */
  async abort(): Promise<void> {
    if (this.state === 'finished' || this.state === 'aborted') return;
    const wasFinishing = this.state === 'finishing';
    this.state = 'aborted';
    this.queue = [];
    this.buffers.fill(undefined);
    this.freeBuffers.length = 0;
    this.buffered = 0;
    // finish() closes the handle and notifies the host itself once it notices the abort.
    if (wasFinishing) return;
    if (this.draining) await this.draining;
    await this.fh.close().catch(() => {});
    this.host.onClosed(this);
  }

  private seal(subpartition: number): void {
    const buf = this.buffers[subpartition]!;
    const len = this.fill[subpartition]!;
    const records = this.bufferRecords[subpartition]!;
    this.buffers[subpartition] = undefined;
    this.fill[subpartition] = 0;
    this.bufferRecords[subpartition] = 0;
    this.buffered -= len;
    this.appendBlock(subpartition, buf.subarray(0, BLOCK_HEADER_BYTES + len), len, records);
  }

  private appendBlock(subpartition: number, block: Buffer, payloadLength: number, records: number): void {
    writeBlockHeader(block, subpartition, payloadLength, records);
    this.blockOffsets[subpartition]!.push(this.fileOffset);
    this.blockLengths[subpartition]!.push(block.length);
    this.subBytes[subpartition]! += payloadLength;
    this.fileOffset += block.length;
    this.queue.push(block);
    this.queued += block.length;
    this.draining ??= this.drain();
  }

  /** The single background writer: appends queued blocks in order, batched with writev. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 && this.failure === undefined && this.state !== 'aborted') {
        const batch = this.queue.splice(0, MAX_WRITEV_BUFFERS);
        const bytes = batch.reduce((n, b) => n + b.length, 0);
        try {
          await writevFully(this.fh, batch, this.writtenOffset);
          this.writtenOffset += bytes;
        } catch (err) {
          this.failure = err;
        }
        this.queued -= bytes;
        if (this.state === 'open') this.recycle(batch);
      }
    } finally {
      this.draining = undefined;
    }
  }

  private recycle(blocks: Buffer[]): void {
    const size = BLOCK_HEADER_BYTES + this.options.blockSize;
    for (const b of blocks) {
      if (this.freeBuffers.length >= 4) return;
      // Only whole-capacity buffers are reusable; oversized single-record blocks are not.
      // (All writer buffers are unpooled, so a buffer of exactly this size is ours alone.)
      if (b.buffer.byteLength === size && b.byteOffset === 0) this.freeBuffers.push(Buffer.from(b.buffer, 0, size));
    }
  }

  private notOpen(): ReboundError {
    return new IllegalStateError(
      `partition ${this.key} is ${this.state === 'aborted' ? 'released or aborted' : this.state}; it takes no more records`,
    );
  }

  private writeFailure(): ReboundError {
    return new InternalError(`writing partition ${this.key} failed: ${errorMessage(this.failure)}`, {
      cause: this.failure,
    });
  }
}

async function writevFully(fh: FileHandle, buffers: Buffer[], position: number): Promise<void> {
  let pending = buffers;
  let pos = position;
  for (;;) {
    const total = pending.reduce((n, b) => n + b.length, 0);
    const { bytesWritten } = await fh.writev(pending, pos);
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
