import { crc32c, type Clock } from '@rebound/core';
import { CRC_BYTES, RECORD_HEADER_BYTES, readUInt32BE, writeRecordHeader, writeUInt32BE } from './format.js';
import { JOB_EVENT_TYPES, jobEventCodec, type JobEvent } from './job-event.js';
import { ProtoWriter } from './proto-codec.js';

/** In the write queue: the file ends here; what follows goes to a new file. */
export const CUT = Symbol('cut-block');
export type WriteQueueItem = Buffer | typeof CUT;

/** Chunks at least this full are handed to the writer as they are; smaller ones are copied out. */
const HAND_OVER_FRACTION = 4;

/**
 * Batch buffers kept for reuse once the writer has written them. A fresh buffer of a megabyte
 * costs its page faults on first touch (1.2-1.7 ms per megabyte measured, about a third of the
 * time of appending the events that fill it); two cover the batches one flush
 * takes while appends go on.
 */
const SPARE_BATCHES = 2;

/** An appended frame's length, and whether to write now or let the flush interval decide. */
export interface AppendResult {
  readonly frameLength: number;
  readonly outcome: 'flush' | 'wait';
}

/**
 * The job event log's write side in memory: events are framed (header, payload, CRC32C) into a
 * batch buffer, which is sealed into chunks of the write queue; the single background writer
 * takes the queue as a whole (`take`). Decides when enough is buffered to write
 * (`writeBufferSize`), so the store only schedules.
 */
export class EventWriteBuffer {
  private batch: ProtoWriter;
  private batchEvents = 0;
  private queue: WriteQueueItem[] = [];
  private queuedBytes = 0;
  private queuedEvents = 0;
  /** Batches whose buffers are in the queue, handed over as they are. */
  private queuedBatches: ProtoWriter[] = [];
  private readonly spare: ProtoWriter[] = [];
  /**
   * Starts of the batch's frames whose CRC is not written yet. Checksumming a frame right after
   * encoding it costs more than checksumming the same frames later (measured: encode 631 ns and
   * CRC 149 ns per event apart, 953 ns interleaved; the CRC reads back bytes just stored), so the
   * CRCs of a batch are written when it is sealed.
   */
  private unchecked: number[] = [];

  constructor(
    private readonly writeBufferSize: number,
    private readonly clock: Clock,
  ) {
    this.batch = this.newBatch();
  }

  /** Bytes framed but not yet taken by the writer. */
  get pendingBytes(): number {
    return this.queuedBytes + this.batch.pos;
  }

  /**
   * Frames `event` into the batch; with `cutBlock`, its file ends after it. Throws when the event
   * cannot be encoded, leaving the buffer as it was before the call.
   */
  append(event: JobEvent, cutBlock: boolean): AppendResult {
    const w = this.batch;
    const frameStart = w.pos;
    try {
      const spec = JOB_EVENT_TYPES[event.type];
      if (!spec) throw new TypeError(`unknown job event type '${String(event.type)}'`);
      w.ensure(RECORD_HEADER_BYTES);
      w.pos += RECORD_HEADER_BYTES;
      jobEventCodec(event.type).encodeInto(event.event, w);
      const payloadLength = w.pos - frameStart - RECORD_HEADER_BYTES;
      w.ensure(CRC_BYTES);
      writeRecordHeader(w.buf, frameStart, spec.id, payloadLength, this.clock.now());
      w.pos += CRC_BYTES;
    } catch (err) {
      w.pos = frameStart;
      throw err;
    }
    this.unchecked.push(frameStart);
    this.batchEvents++;
    const frameLength = w.pos - frameStart;
    let flush = cutBlock;
    if (frameLength > this.writeBufferSize) {
      // Larger than the buffer: what precedes it goes first, then the frame on its own.
      this.seal(frameStart);
      flush = true;
    }
    if (cutBlock) this.cut();
    if (this.batch.pos >= this.writeBufferSize) {
      // Full: hand it over as it is. Until the writer runs (the caller may not yield for a
      // while) further events go to a fresh buffer instead of growing and copying this one.
      this.seal();
      flush = true;
    }
    const outcome = flush || this.queuedBytes + this.batch.pos >= this.writeBufferSize ? 'flush' : 'wait';
    return { frameLength, outcome };
  }

  /** Ends the current file after what is buffered so far. */
  cut(): void {
    this.seal();
    this.queue.push(CUT);
  }

  /**
   * Everything buffered, for the writer: the queue items and how many events they hold. Give
   * `batches` back through `recycle` once no write uses the items any more.
   */
  take(): { items: WriteQueueItem[]; events: number; batches: readonly ProtoWriter[] } {
    this.seal();
    const items = this.queue;
    const events = this.queuedEvents;
    const batches = this.queuedBatches;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedEvents = 0;
    this.queuedBatches = [];
    return { items, events, batches };
  }

  /** Takes back the batches of a `take` whose items are written (or dropped): their buffers are free. */
  recycle(batches: readonly ProtoWriter[]): void {
    for (const w of batches) {
      if (this.spare.length >= SPARE_BATCHES) return;
      // A batch that grew for an oversized frame is not kept.
      if (w.buf.length > this.batchCapacity()) continue;
      w.reset();
      this.spare.push(w);
    }
  }

  /** Forgets everything buffered; returns how many events that was. */
  drop(): number {
    const dropped = this.queuedEvents + this.batchEvents;
    this.recycle(this.queuedBatches);
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedEvents = 0;
    this.queuedBatches = [];
    this.batch.reset();
    this.unchecked.length = 0;
    this.batchEvents = 0;
    return dropped;
  }

  private batchCapacity(): number {
    return Math.min(this.writeBufferSize, 4 * 1024 * 1024) + 1024;
  }

  private newBatch(): ProtoWriter {
    return this.spare.pop() ?? new ProtoWriter(this.batchCapacity());
  }

  /** Hands the current batch's buffer over with the queue and starts a new batch. */
  private handOver(): void {
    this.queuedBatches.push(this.batch);
    this.batch = this.newBatch();
  }

  /**
   * Moves the buffered bytes to the write queue. With `splitAt`, the bytes from there on (one
   * oversized frame) become a chunk of their own.
   */
  private seal(splitAt?: number): void {
    const w = this.batch;
    if (w.pos === 0) return;
    this.writeChecksums();
    if (splitAt !== undefined && splitAt > 0 && splitAt < w.pos) {
      this.pushChunk(w.buf.subarray(0, splitAt), 0);
      this.pushChunk(w.buf.subarray(splitAt, w.pos), 0);
      this.queuedEvents += this.batchEvents;
      this.handOver();
    } else if (w.pos * HAND_OVER_FRACTION >= this.writeBufferSize || w.buf.length > 2 * this.writeBufferSize + 1024) {
      this.pushChunk(w.buf.subarray(0, w.pos), this.batchEvents);
      this.handOver();
    } else {
      // Little in it (an interval flush): copy it out and keep reusing the buffer.
      this.pushChunk(Buffer.from(w.buf.subarray(0, w.pos)), this.batchEvents);
      w.reset();
    }
    this.batchEvents = 0;
  }

  /** Writes the CRC of every frame of the batch that has none yet. */
  private writeChecksums(): void {
    const b = this.batch.buf;
    const starts = this.unchecked;
    for (let i = 0; i < starts.length; i++) {
      const start = starts[i]!;
      const crcAt = start + RECORD_HEADER_BYTES + readUInt32BE(b, start + 4);
      writeUInt32BE(b, crcAt, crc32c(b, start, crcAt));
    }
    starts.length = 0;
  }

  private pushChunk(chunk: Buffer, events: number): void {
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    this.queuedEvents += events;
  }
}
