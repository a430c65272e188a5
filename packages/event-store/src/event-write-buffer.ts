import { crc32c, type Clock } from '@rebound/core';
import { CRC_BYTES, RECORD_HEADER_BYTES, writeRecordHeader } from './format.js';
import { JOB_EVENT_TYPES, jobEventCodec, type JobEvent } from './job-event.js';
import { ProtoWriter } from './proto-codec.js';

/** In the write queue: the file ends here; what follows goes to a new file. */
export const CUT = Symbol('cut-block');
export type WriteQueueItem = Buffer | typeof CUT;

/** Chunks at least this full are handed to the writer as they are; smaller ones are copied out. */
const HAND_OVER_FRACTION = 4;

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
      w.buf.writeUInt32BE(crc32c(w.buf, frameStart, w.pos), w.pos);
      w.pos += CRC_BYTES;
    } catch (err) {
      w.pos = frameStart;
      throw err;
    }
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

  /** Everything buffered, for the writer: the queue items and how many events they hold. */
  take(): { items: WriteQueueItem[]; events: number } {
    this.seal();
    const items = this.queue;
    const events = this.queuedEvents;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedEvents = 0;
    return { items, events };
  }

  /** Forgets everything buffered; returns how many events that was. */
  drop(): number {
    const dropped = this.queuedEvents + this.batchEvents;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedEvents = 0;
    this.batch.reset();
    this.batchEvents = 0;
    return dropped;
  }

  private newBatch(): ProtoWriter {
    return new ProtoWriter(Math.min(this.writeBufferSize, 4 * 1024 * 1024) + 1024);
  }

  /**
   * Moves the buffered bytes to the write queue. With `splitAt`, the bytes from there on (one
   * oversized frame) become a chunk of their own.
   */
  private seal(splitAt?: number): void {
    const w = this.batch;
    if (w.pos === 0) return;
    if (splitAt !== undefined && splitAt > 0 && splitAt < w.pos) {
      this.pushChunk(w.buf.subarray(0, splitAt), 0);
      this.pushChunk(w.buf.subarray(splitAt, w.pos), 0);
      this.queuedEvents += this.batchEvents;
      this.batch = this.newBatch();
    } else if (w.pos * HAND_OVER_FRACTION >= this.writeBufferSize || w.buf.length > 2 * this.writeBufferSize + 1024) {
      this.pushChunk(w.buf.subarray(0, w.pos), this.batchEvents);
      this.batch = this.newBatch();
    } else {
      // Little in it (an interval flush): copy it out and keep reusing the buffer.
      this.pushChunk(Buffer.from(w.buf.subarray(0, w.pos)), this.batchEvents);
      w.reset();
    }
    this.batchEvents = 0;
  }

  private pushChunk(chunk: Buffer, events: number): void {
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    this.queuedEvents += events;
  }
}
