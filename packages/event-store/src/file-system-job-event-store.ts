import { mkdir, open, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import {
  IllegalStateError,
  crc32c,
  type SealedEventFile,
  ReboundError,
  errorMessage,
  fsyncDir,
  silentLogger,
  systemClock,
  type Clock,
  type Configuration,
  type Logger,
} from '@rebound/core';
import { JobEventStoreFailedError, JobEventStoreFencedError } from './errors.js';
import {
  CRC_BYTES,
  PAYLOAD_VERSION,
  RECORD_HEADER_BYTES,
  encodeFileHeader,
  eventFileName,
  jobEventsDir,
  listEventFiles,
  writeRecordHeader,
  type EventFileRef,
} from './format.js';
import { JOB_EVENT_TYPES, jobEventCodec, type JobEvent, type JobEventRecord } from './job-event.js';
import { JobEventLogReader, type ReplayReport } from './job-event-log-reader.js';
import { sealsOfReplay } from './seals.js';
import type { JobEventStore } from './job-event-store.js';
import { DEFAULT_JOB_EVENT_STORE_SETTINGS, jobEventStoreSettings, type JobEventStoreDurability } from './options.js';
import { ProtoWriter } from './proto-codec.js';
import { realFlushTimer, type FlushTimer } from './flush-timer.js';
import { reportAppend, reportFlush } from './metrics.js';

/** The part of a file handle the writer uses; injectable to simulate a full disk. */
export interface EventFileHandle {
  writev(buffers: Buffer[]): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  stat(): Promise<{ nlink: number }>;
  close(): Promise<void>;
}

/** Creates a new file, failing with EEXIST if it exists (never appends to another writer's file). */
export type OpenExclusive = (path: string) => Promise<EventFileHandle>;

const openExclusiveDefault: OpenExclusive = (path) => open(path, 'wx');

export type JobEventStoreState = 'created' | 'running' | 'failed' | 'fenced' | 'stopped';

export interface JobEventStoreStatus {
  state: JobEventStoreState;
  epoch: number;
  /** Why recording stopped ('failed' or 'fenced'). */
  failure?: ReboundError;
}

export interface JobEventStoreStats {
  /** Events accepted by writeEvent. */
  eventsWritten: number;
  /** Events accepted but never written: pending when the store failed or was fenced, or written after. */
  eventsDropped: number;
  /** Bytes written to files, headers included. */
  bytesWritten: number;
  flushes: number;
  fsyncs: number;
  filesCreated: number;
  /** Bytes waiting for the next flush. */
  pendingBytes: number;
}

export interface FileSystemJobEventStoreOptions {
  haDir: string;
  jobId: string;
  /** Fencing epoch of the JobMaster that owns this store. */
  epoch: number;
  /** The epoch of the current leader; checked before every flush (and before clearing). */
  currentLeaderEpoch: () => Promise<number> | number;
  jobMasterId?: string;
  /** Source of the three settings below when they are not given. */
  config?: Configuration;
  writeBufferSize?: number;
  flushIntervalMs?: number;
  durability?: JobEventStoreDurability;
  clock?: Clock;
  flushTimer?: FlushTimer;
  logger?: Logger;
  /** Called once when recording stops for good: the store failed or was fenced. */
  onDisabled?: (state: 'failed' | 'fenced', error: ReboundError) => void;
  openExclusive?: OpenExclusive;
  readChunkBytes?: number;
}

const CUT = Symbol('cut-block');
type QueueItem = Buffer | typeof CUT;

interface CurrentFile {
  handle: EventFileHandle;
  name: string;
  /** Written since the last sync. */
  dirty: boolean;
  /** Its directory entry is not yet fsynced. */
  newEntry: boolean;
}

/** Chunks at least this full are handed to the writer as they are; smaller ones are copied out. */
const HAND_OVER_FRACTION = 4;

/**
 * The job event log on a (shared) file system, under `<ha-dir>/jobs/<jobId>/job-events/`
 * (Flink's FileSystemJobEventStore), with the weaknesses of Flink's fixed:
 * - every file header and record carries a CRC32C; replay stops at the first torn or corrupt
 *   record and reports it: only the longest valid prefix of the whole log is replayed, never a
 *   history with a hole in it (see JobEventLogReader);
 * - a checksummed record that cannot be understood is a typed corruption error, not a silent
 *   end of the log;
 * - a writer whose epoch is older than the leader's stops writing (checked before each flush)
 *   and never deletes the log;
 * - files are created exclusively, so no attempt ever appends to another attempt's file.
 *
 * `writeEvent` encodes the event into an in-memory buffer and returns; one background writer
 * (a promise chain, so flushes never overlap) writes the buffer when it holds
 * `writeBufferSize` bytes, after `flushIntervalMs`, on a cut block, or on `flushNow`/`stop`,
 * and fsyncs each flush (durability 'fsync'). Any write failure disables recording for the
 * job, logs one error and leaves the job running; what was written stays a valid prefix.
 */
export class FileSystemJobEventStore implements JobEventStore {
  readonly directory: string;
  readonly jobId: string;
  readonly epoch: number;
  private readonly writeBufferSize: number;
  private readonly flushIntervalMs: number;
  private readonly durability: JobEventStoreDurability;
  private readonly clock: Clock;
  private readonly flushTimer: FlushTimer;
  private readonly logger: Logger;
  private readonly openExclusive: OpenExclusive;

  private state: JobEventStoreState = 'created';
  private failure: ReboundError | undefined;
  private readFiles: EventFileRef[] = [];
  private nextIndex = 0;
  private dirReady = false;
  private cursor: JobEventLogReader | undefined;

  private batch: ProtoWriter;
  private batchEvents = 0;
  private queue: QueueItem[] = [];
  private queuedBytes = 0;
  private queuedEvents = 0;
  private cancelTimer: (() => void) | undefined;
  private flushChain: Promise<void> = Promise.resolve();
  private flushQueued: Promise<void> | undefined;
  private file: CurrentFile | undefined;
  /** Goes into the header of the next file this attempt creates (see sealHistory). */
  private pendingSeal: SealedEventFile[] | undefined;

  private readonly counters = { eventsWritten: 0, eventsDropped: 0, bytesWritten: 0, flushes: 0, fsyncs: 0, filesCreated: 0 };

  constructor(private readonly options: FileSystemJobEventStoreOptions) {
    const fromConfig = options.config ? jobEventStoreSettings(options.config) : DEFAULT_JOB_EVENT_STORE_SETTINGS;
    this.writeBufferSize = options.writeBufferSize ?? fromConfig.writeBufferSize;
    this.flushIntervalMs = options.flushIntervalMs ?? fromConfig.flushIntervalMs;
    this.durability = options.durability ?? fromConfig.durability;
    if (!(this.writeBufferSize >= 1)) throw new RangeError('writeBufferSize must be at least 1 byte');
    if (!(this.flushIntervalMs >= 0)) throw new RangeError('flushIntervalMs must not be negative');
    this.jobId = options.jobId;
    this.epoch = options.epoch;
    this.directory = jobEventsDir(options.haDir, options.jobId);
    this.clock = options.clock ?? systemClock;
    this.flushTimer = options.flushTimer ?? realFlushTimer;
    this.logger = (options.logger ?? silentLogger()).child({ component: 'job-event-store', jobId: options.jobId, epoch: options.epoch });
    this.openExclusive = options.openExclusive ?? openExclusiveDefault;
    this.batch = this.newBatch();
  }

  // ----------------------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    if (this.state === 'running') return;
    if (this.state === 'failed' || this.state === 'fenced') {
      throw new IllegalStateError(`job event store is ${this.state}; stop it before starting it again`);
    }
    this.readFiles = await listEventFiles(this.directory);
    this.nextIndex = this.readFiles.length > 0 ? this.readFiles[this.readFiles.length - 1]!.index + 1 : 0;
    this.cursor = undefined;
    this.failure = undefined;
    this.dirReady = false;
    this.state = 'running';
    this.logger.debug({ event: 'job-event-store.start', files: this.readFiles.length, nextFile: eventFileName(this.nextIndex) }, 'job event store started');
  }

  async stop(clear: boolean): Promise<void> {
    if (this.state === 'stopped') return;
    this.cancelFlushTimer();
    if (this.state === 'running') {
      if (clear) this.dropPending();
      else await this.requestFlush();
    }
    await this.flushChain;
    await this.enqueue(() => this.closeFile());
    if (this.cursor) await this.cursor.close().catch(() => {});
    this.cursor = undefined;
    if (clear) await this.clear();
    this.state = 'stopped';
  }

  status(): JobEventStoreStatus {
    return { state: this.state, epoch: this.epoch, ...(this.failure ? { failure: this.failure } : {}) };
  }

  stats(): JobEventStoreStats {
    return { ...this.counters, pendingBytes: this.queuedBytes + this.batch.pos };
  }

  async isEmpty(): Promise<boolean> {
    return (await listEventFiles(this.directory)).length === 0;
  }

  // ----------------------------------------------------------------------------- writing

  writeEvent(event: JobEvent, cutBlock = false): void {
    if (this.state === 'created' || this.state === 'stopped') {
      throw new IllegalStateError(`job event store is ${this.state}: start it before writing events`);
    }
    if (this.state !== 'running') {
      this.counters.eventsDropped++;
      return;
    }
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
      // An event that cannot be encoded is a bug of the caller; skipping it would leave a log
      // that misses an event, so recording stops here and the log stays a valid prefix.
      w.pos = frameStart;
      this.counters.eventsDropped++;
      this.fail(err, `cannot encode a ${String(event.type)} event`);
      return;
    }
    this.counters.eventsWritten++;
    this.batchEvents++;
    const frameLength = w.pos - frameStart;
    reportAppend(frameLength);
    let flush = cutBlock;
    if (frameLength > this.writeBufferSize) {
      // Larger than the buffer: what precedes it goes first, then the frame on its own.
      this.sealBatch(frameStart);
      flush = true;
    }
    if (cutBlock) {
      this.sealBatch();
      this.queue.push(CUT);
    }
    if (this.batch.pos >= this.writeBufferSize) {
      // Full: hand it over as it is. Until the writer runs (the caller may not yield for a
      // while) further events go to a fresh buffer instead of growing and copying this one.
      this.sealBatch();
      flush = true;
    }
    if (flush || this.queuedBytes + this.batch.pos >= this.writeBufferSize) {
      void this.requestFlush();
    } else if (!this.cancelTimer) {
      this.cancelTimer = this.flushTimer.schedule(this.flushIntervalMs, () => {
        this.cancelTimer = undefined;
        void this.requestFlush();
      });
    }
  }

  /** Writes (and fsyncs) everything enqueued so far; resolves when it is on disk. */
  flushNow(): Promise<void> {
    return this.requestFlush();
  }

  /**
   * Seals the earlier files at the lengths `replayed` read (see seals.ts): starts a new file
   * whose header carries the seal and syncs it before resolving, so the seal is durable before
   * this leader acts on what it replayed. Events written before this call go first, into the
   * file they were meant for. Without earlier files there is nothing to seal.
   */
  sealHistory(replayed: ReplayReport): Promise<void> {
    if (this.state !== 'running') return Promise.resolve();
    if (this.readFiles.length === 0) return Promise.resolve();
    this.sealBatch();
    this.queue.push(CUT);
    const seal = sealsOfReplay(replayed.files);
    void this.requestFlush();
    return this.enqueue(async () => {
      if (this.state !== 'running') return;
      this.pendingSeal = seal;
      try {
        const leaderEpoch = await this.options.currentLeaderEpoch();
        if (leaderEpoch > this.epoch) return await this.fence(leaderEpoch);
        await this.writeToFile([]);
        await this.syncFile();
      } catch (err) {
        this.fail(err, 'cannot seal the job event log');
      }
    });
  }

  /** Resolves once no flush is running or queued (for tests: waits without triggering one). */
  async idle(): Promise<void> {
    let chain: Promise<void>;
    do {
      chain = this.flushChain;
      await chain;
    } while (chain !== this.flushChain);
  }

  private newBatch(): ProtoWriter {
    return new ProtoWriter(Math.min(this.writeBufferSize, 4 * 1024 * 1024) + 1024);
  }

  /**
   * Moves the buffered bytes to the write queue. With `splitAt`, the bytes from there on (one
   * oversized frame) become a chunk of their own.
   */
  private sealBatch(splitAt?: number): void {
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

  private cancelFlushTimer(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
  }

  private dropPending(): void {
    this.counters.eventsDropped += this.queuedEvents + this.batchEvents;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedEvents = 0;
    this.batch.reset();
    this.batchEvents = 0;
  }

  /** Runs `task` on the single writer, after everything enqueued before it. */
  private enqueue(task: () => Promise<void>): Promise<void> {
    const run = this.flushChain.then(task);
    this.flushChain = run.catch(() => {});
    return run;
  }

  private requestFlush(): Promise<void> {
    if (this.flushQueued) return this.flushQueued;
    const queued = this.enqueue(async () => {
      this.flushQueued = undefined;
      await this.flushOnce();
    });
    this.flushQueued = queued;
    return queued;
  }

  private async flushOnce(): Promise<void> {
    if (this.state !== 'running') return;
    this.cancelFlushTimer();
    this.sealBatch();
    const items = this.queue;
    const events = this.queuedEvents;
    this.queue = [];
    this.queuedBytes = 0;
    this.queuedEvents = 0;
    if (items.length === 0) return;
    try {
      const leaderEpoch = await this.options.currentLeaderEpoch();
      if (leaderEpoch > this.epoch) {
        this.counters.eventsDropped += events;
        await this.fence(leaderEpoch);
        return;
      }
      if (this.state !== 'running') {
        this.counters.eventsDropped += events;
        return;
      }
      this.counters.flushes++;
      const flushStart = performance.now();
      const bytesBefore = this.counters.bytesWritten;
      let group: Buffer[] = [];
      for (const item of items) {
        if (item === CUT) {
          if (group.length > 0) await this.writeToFile(group);
          group = [];
          await this.syncFile();
          await this.closeFileQuietly();
        } else {
          group.push(item);
        }
      }
      if (group.length > 0) await this.writeToFile(group);
      await this.syncFile();
      reportFlush(performance.now() - flushStart, this.counters.bytesWritten - bytesBefore);
    } catch (err) {
      this.counters.eventsDropped += events;
      this.fail(err, 'cannot write job events');
    }
  }

  private async writeToFile(chunks: Buffer[]): Promise<void> {
    if (!this.file) chunks = [await this.openNewFile(), ...chunks];
    if (chunks.length === 0) return;
    const file = this.file!;
    let total = 0;
    for (const c of chunks) total += c.length;
    file.dirty = true;
    let { bytesWritten } = await file.handle.writev(chunks);
    this.counters.bytesWritten += bytesWritten;
    while (bytesWritten < total) {
      // A short write (e.g. the disk filled up mid-way): retry the rest, which reports the error.
      let skip = bytesWritten;
      const rest: Buffer[] = [];
      for (const c of chunks) {
        if (skip >= c.length) skip -= c.length;
        else {
          rest.push(skip > 0 ? c.subarray(skip) : c);
          skip = 0;
        }
      }
      chunks = rest;
      total -= bytesWritten;
      ({ bytesWritten } = await file.handle.writev(chunks));
      if (bytesWritten === 0) throw new JobEventStoreFailedError('write made no progress');
      this.counters.bytesWritten += bytesWritten;
    }
  }

  /** Creates the next file of this attempt; returns its header, to be written first. */
  private async openNewFile(): Promise<Buffer> {
    if (!this.dirReady) {
      const created = await mkdir(this.directory, { recursive: true });
      if (created !== undefined && this.durability === 'fsync') {
        for (let d = this.directory; ; d = dirname(d)) {
          await fsyncDir(dirname(d));
          if (d === created || dirname(d) === d) break;
        }
      }
      this.dirReady = true;
    }
    // Later files are not created with mkdir: a removed directory must fail loudly, not be
    // silently recreated without the files it held.
    for (let attempts = 0; ; attempts++) {
      const name = eventFileName(this.nextIndex);
      try {
        const handle = await this.openExclusive(join(this.directory, name));
        const index = this.nextIndex++;
        this.file = { handle, name, dirty: false, newEntry: true };
        this.counters.filesCreated++;
        const header = encodeFileHeader({
          job_id: this.jobId,
          epoch: this.epoch,
          jobmaster_id: this.options.jobMasterId ?? '',
          created_at_ms: this.clock.now(),
          file_index: index,
          payload_version: PAYLOAD_VERSION,
          ...(this.pendingSeal ? { seals_earlier_files: true, sealed_files: this.pendingSeal } : {}),
        });
        this.pendingSeal = undefined;
        this.logger.debug({ event: 'job-event-store.file', file: name }, 'job event file created');
        return header;
      } catch (err) {
        // Another writer (an attempt that started after our listing) took this index.
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' && attempts < 10_000) {
          this.nextIndex++;
          continue;
        }
        throw err;
      }
    }
  }

  private async syncFile(): Promise<void> {
    const file = this.file;
    if (!file || !file.dirty) return;
    if (this.durability === 'fsync') {
      await file.handle.datasync();
      this.counters.fsyncs++;
      if (file.newEntry) {
        await fsyncDir(this.directory);
        file.newEntry = false;
      }
    }
    file.dirty = false;
    // Writes to a deleted file succeed on POSIX and vanish: check that ours still has a name.
    if ((await file.handle.stat()).nlink === 0) {
      throw new JobEventStoreFailedError(`job event file ${join(this.directory, file.name)} was deleted while being written`);
    }
  }

  private async closeFile(): Promise<void> {
    if (!this.file) return;
    try {
      if (this.state === 'running') await this.syncFile();
    } catch (err) {
      this.fail(err, 'cannot write job events');
    } finally {
      await this.closeFileQuietly();
    }
  }

  private async closeFileQuietly(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    if (file) await file.handle.close().catch(() => {});
  }

  // ----------------------------------------------------------------------------- disabling

  private fail(err: unknown, what: string): void {
    if (this.state !== 'running') return;
    this.state = 'failed';
    this.cancelFlushTimer();
    this.dropPending();
    const failure =
      err instanceof ReboundError && !(err instanceof IllegalStateError)
        ? err
        : new JobEventStoreFailedError(`${what}: ${errorMessage(err)}`, { cause: err });
    this.failure = failure;
    this.logger.error(
      { event: 'job-event-store.failed', err, directory: this.directory, file: this.file?.name },
      `${what}; recording of job events is disabled for job ${this.jobId} (the job keeps running, but a JobMaster failover will only recover what was recorded before)`,
    );
    this.options.onDisabled?.('failed', failure);
    void this.enqueue(() => this.closeFileQuietly());
  }

  private async fence(leaderEpoch: number): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'fenced';
    this.cancelFlushTimer();
    this.dropPending();
    const failure = new JobEventStoreFencedError(this.epoch, leaderEpoch);
    this.failure = failure;
    this.logger.warn({ event: 'job-event-store.fenced', leaderEpoch, directory: this.directory }, failure.message);
    this.options.onDisabled?.('fenced', failure);
    await this.closeFileQuietly();
  }

  private async clear(): Promise<void> {
    if (this.state === 'fenced') {
      this.logger.warn({ event: 'job-event-store.clear-skipped' }, 'not clearing job events: this JobMaster was fenced');
      return;
    }
    let leaderEpoch: number;
    try {
      leaderEpoch = await this.options.currentLeaderEpoch();
    } catch (err) {
      this.logger.warn({ event: 'job-event-store.clear-skipped', err }, 'not clearing job events: cannot tell the current leader epoch');
      return;
    }
    if (leaderEpoch > this.epoch) {
      this.logger.warn({ event: 'job-event-store.clear-skipped', leaderEpoch }, 'not clearing job events: a newer JobMaster leads the job');
      return;
    }
    try {
      await rm(this.directory, { recursive: true, force: true });
      this.logger.debug({ event: 'job-event-store.cleared', directory: this.directory }, 'job events cleared');
    } catch (err) {
      this.logger.warn({ event: 'job-event-store.clear-failed', err, directory: this.directory }, 'cannot delete job events');
    }
  }

  // ----------------------------------------------------------------------------- reading

  /** A reader over the log as it was when the store started (what this attempt replays). */
  openReader(): JobEventLogReader {
    if (this.state === 'created') throw new IllegalStateError('job event store is not started');
    return new JobEventLogReader(this.directory, this.readFiles, {
      jobId: this.jobId,
      ...(this.options.readChunkBytes !== undefined ? { readChunkBytes: this.options.readChunkBytes } : {}),
    });
  }

  async readEvent(): Promise<JobEventRecord | null> {
    this.cursor ??= this.openReader();
    return this.cursor.next();
  }

  [Symbol.asyncIterator](): AsyncIterator<JobEventRecord> {
    return this.openReader()[Symbol.asyncIterator]();
  }
}
