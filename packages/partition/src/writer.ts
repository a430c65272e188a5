import {
  IllegalStateError,
  InternalError,
  InvalidArgumentError,
  ReboundError,
  errorMessage,
  withContext,
} from '@rebound/core';
import type { BlockSink, FinishedPartition, WrittenPartition } from './block-sink.js';
import { encodeRecord, RECORD_SEPARATOR } from './codec.js';
import {
  BLOCK_HEADER_BYTES,
  INDEX_VERSION,
  type NormalizedPartitionId,
  type PartitionIndexFile,
  writeBlockHeader,
} from './format.js';

export type { FinishedPartition, SubpartitionBlocks, WrittenPartition } from './block-sink.js';

export interface ResultPartitionWriterOptions {
  /** Payload bytes per block (`taskmanager.network.block-size`). */
  blockSize: number;
  /**
   * `flushIfNeeded()` waits for the sink once more than this many blocks' worth of bytes are
   * queued for it; it bounds the memory of sealed blocks waiting for the disk or the network.
   */
  maxQueuedBlocks: number;
  clock: () => number;
}

/** What the writer tells its owner (the store, for a local partition). */
export interface WriterHost<R extends WrittenPartition> {
  onFinished(writer: ResultPartitionWriter<R>, partition: R): void;
  /** The writer was aborted or failed: its sink is closed. */
  onClosed(writer: ResultPartitionWriter<R>): void;
}

type State = 'open' | 'finishing' | 'finished' | 'aborted';

/**
 * How the writer is fed: records it encodes and seals itself (a producing task), or whole blocks
 * another writer sealed (a shuffle worker ingesting a producer's stream). Never both.
 */
type Mode = 'unset' | 'records' | 'blocks';

// Large writev batches buy nothing and some platforms cap the iovec count.
const MAX_WRITEV_BUFFERS = 128;

/**
 * Writes one blocking result partition: records go to a per-subpartition in-memory buffer, each
 * full buffer is sealed as a block and handed to the sink (the data file, or the shuffle workers)
 * in the background. Memory is bounded by numSubpartitions × blockSize of open buffers (plus one
 * oversized record, which gets a block of its own) and by the queue for the sink, which the task
 * drains with `flushIfNeeded()`.
 */
export class ResultPartitionWriter<R extends WrittenPartition = FinishedPartition> {
  readonly key: string;
  private state: State = 'open';
  private mode: Mode = 'unset';
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
    private readonly sink: BlockSink<R>,
    private readonly host: WriterHost<R>,
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

  /** Bytes of sealed blocks not yet taken by the sink. */
  get queuedBytes(): number {
    return this.queued;
  }

  /** Bytes of blocks sealed so far: the length of the partition's data. */
  get dataBytes(): number {
    return this.fileOffset;
  }

  get isOpen(): boolean {
    return this.state === 'open';
  }

  /** Appends a record to a subpartition. Synchronous and cheap; the sink is fed in the background. */
  emit(subpartition: number, record: unknown): void {
    if (this.state !== 'open') throw this.notOpen();
    if (this.failure !== undefined) throw this.writeFailure(this.failure);
    if (this.mode !== 'records') this.setMode('records');
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
   * Appends whole blocks that another writer sealed (a shuffle worker ingesting a producer's
   * stream): `bytes` holds one or more blocks, header and payload, none cut off. Headers are
   * checked against the partition (the CRC is checked when the block is read), and the blocks
   * are recorded in the index exactly as their producer's writer recorded them. Throws
   * INVALID_ARGUMENT for bytes that are not whole blocks of this partition, and then appends
   * nothing of them.
   */
  appendSealedBlocks(bytes: Buffer): void {
    if (this.state !== 'open') throw this.notOpen();
    if (this.failure !== undefined) throw this.writeFailure(this.failure);
    if (this.mode !== 'blocks') this.setMode('blocks');
    const found: Array<[number, number, number, number]> = [];
    for (let pos = 0; pos < bytes.length;) {
      if (bytes.length - pos < BLOCK_HEADER_BYTES) {
        throw new InvalidArgumentError(
          `partition ${this.key}: ${bytes.length - pos} bytes at the end of a message are not a whole block header`,
        );
      }
      const sub = bytes.readUInt32BE(pos);
      const len = bytes.readUInt32BE(pos + 4);
      const records = bytes.readUInt32BE(pos + 8);
      if (sub >= this.numSubpartitions) {
        throw new InvalidArgumentError(
          `partition ${this.key}: a block of subpartition ${sub}, but the partition has ${this.numSubpartitions}`,
        );
      }
      if (len > bytes.length - pos - BLOCK_HEADER_BYTES) {
        throw new InvalidArgumentError(
          `partition ${this.key}: a block of ${len} payload bytes is cut off after ${bytes.length - pos - BLOCK_HEADER_BYTES} (blocks must arrive whole)`,
        );
      }
      found.push([sub, pos, len, records]);
      pos += BLOCK_HEADER_BYTES + len;
    }
    if (found.length === 0) return;
    const base = this.fileOffset;
    for (const [sub, pos, len, records] of found) {
      this.blockOffsets[sub]!.push(base + pos);
      this.blockLengths[sub]!.push(BLOCK_HEADER_BYTES + len);
      this.subBytes[sub]! += len;
      this.subRecords[sub]! += records;
    }
    this.enqueue(bytes);
  }

  /**
   * Backpressure point: the task calls this between batches. Resolves at once unless more than
   * `maxQueuedBlocks` blocks are waiting for the sink.
   */
  async flushIfNeeded(): Promise<void> {
    this.checkFailure();
    while (this.queued > this.options.maxQueuedBlocks * this.options.blockSize && this.draining) {
      await this.draining;
    }
    this.checkFailure();
  }

  /** The index of what was appended so far, as `finish()` would write it (finishedAtMs aside). */
  indexSoFar(finishedAtMs = 0): PartitionIndexFile {
    return {
      version: INDEX_VERSION,
      partitionId: this.id,
      numSubpartitions: this.numSubpartitions,
      dataBytes: this.fileOffset,
      blocks: this.blockOffsets.map((offs, s) => offs.map((o, i): [number, number] => [o, this.blockLengths[s]![i]!])),
      subpartitionBytes: [...this.subBytes],
      subpartitionRecords: [...this.subRecords],
      finishedAtMs,
    };
  }

  /**
   * Seals all buffers, waits until the sink has every block, and completes the sink with the
   * index: what turns the data into a finished partition (durable on disk, or acknowledged by
   * every shuffle worker). Returns the partition as the sink now holds it.
   */
  async finish(): Promise<R> {
    if (this.state !== 'open') throw this.notOpen();
    this.state = 'finishing';
    try {
      for (let s = 0; s < this.numSubpartitions; s++) {
        if (this.fill[s]! > 0) this.seal(s);
      }
      this.buffers.fill(undefined);
      this.freeBuffers.length = 0;
      if (this.draining) await this.draining;
      this.checkFailure();
      if ((this.state as State) !== 'finishing') throw this.notOpen();
      const finishedAtMs = this.options.clock();
      const written: WrittenPartition = {
        id: this.id,
        key: this.key,
        numSubpartitions: this.numSubpartitions,
        blocks: this.blockOffsets.map((offs, s) => ({
          offsets: Float64Array.from(offs),
          lengths: Uint32Array.from(this.blockLengths[s]!),
        })),
        subpartitionBytes: [...this.subBytes],
        subpartitionRecords: [...this.subRecords],
        totalBytes: this.subBytes.reduce((a, b) => a + b, 0),
        totalRecords: this.subRecords.reduce((a, b) => a + b, 0),
        dataBytes: this.fileOffset,
        finishedAtMs,
      };
      const partition = await this.sink.complete(this.indexSoFar(finishedAtMs), written);
      // A release that raced with us wins: the state check drops the partition again.
      if ((this.state as State) !== 'finishing') throw this.notOpen();
      this.state = 'finished';
      this.host.onFinished(this, partition);
      return partition;
    } catch (err) {
      if (this.state === 'finishing') this.state = 'aborted';
      await this.sink.abort().catch(() => {});
      this.host.onClosed(this);
      throw err;
    }
  }

  /**
   * Stops writing and lets the owner delete what was written (task failed or was cancelled, or
   * the partition was released while being written). Idempotent.
   */
  async abort(): Promise<void> {
    if (this.state === 'finished' || this.state === 'aborted') return;
    const wasFinishing = this.state === 'finishing';
    this.state = 'aborted';
    this.queue = [];
    this.buffers.fill(undefined);
    this.freeBuffers.length = 0;
    this.buffered = 0;
    // Remote calls are cancelled at once (a finish waiting for acknowledgements ends with it).
    const stopped = this.sink.abort().catch(() => {});
    // finish() notifies the host itself once it notices the abort.
    if (wasFinishing) return;
    await stopped;
    if (this.draining) await this.draining;
    this.host.onClosed(this);
  }

  private setMode(mode: 'records' | 'blocks'): void {
    if (this.mode !== 'unset') {
      throw new IllegalStateError(`partition ${this.key} is written with ${this.mode}; it cannot also take ${mode}`);
    }
    this.mode = mode;
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
    this.enqueue(block);
  }

  private enqueue(bytes: Buffer): void {
    this.fileOffset += bytes.length;
    this.queue.push(bytes);
    this.queued += bytes.length;
    this.draining ??= this.drain();
  }

  /** The single background feeder: hands queued blocks to the sink in order, in writev-sized batches. */
  private async drain(): Promise<void> {
    try {
      while (this.queue.length > 0 && this.failure === undefined && this.state !== 'aborted') {
        const batch = this.queue.splice(0, MAX_WRITEV_BUFFERS);
        const bytes = batch.reduce((n, b) => n + b.length, 0);
        try {
          await this.sink.append(batch, this.writtenOffset);
          this.writtenOffset += bytes;
        } catch (err) {
          this.failure = err;
        }
        this.queued -= bytes;
        if (this.state === 'open' && this.mode === 'records') this.recycle(batch);
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

  private checkFailure(): void {
    const failure = this.failure ?? this.sink.failure;
    if (failure !== undefined) throw this.writeFailure(failure);
  }

  private notOpen(): ReboundError {
    return new IllegalStateError(
      `partition ${this.key} is ${this.state === 'aborted' ? 'released or aborted' : this.state}; it takes no more records`,
    );
  }

  /** Keeps the failure's code: a shuffle worker that went away is UNAVAILABLE, not INTERNAL. */
  private writeFailure(failure: unknown): ReboundError {
    const message = `writing partition ${this.key} failed: ${errorMessage(failure)}`;
    if (failure instanceof ReboundError) return withContext(failure, message);
    return new InternalError(message, { cause: failure });
  }
}
