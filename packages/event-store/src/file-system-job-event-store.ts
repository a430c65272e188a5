import { open, rm } from 'node:fs/promises';
import {
  IllegalStateError,
  ReboundError,
  errorMessage,
  silentLogger,
  systemClock,
  type Clock,
  type Logger,
} from '@rebound/core';
import { JobEventStoreFailedError, JobEventStoreFencedError } from './errors.js';
import { jobEventsDir, listEventFiles, type EventFileRef } from './format.js';
import type { JobEvent, JobEventRecord } from './job-event.js';
import { JobEventLogReader } from './job-event-log-reader.js';
import type { ReplayReport } from './replay-report.js';
import { sealsOfReplay } from './seals.js';
import type { JobEventStore } from './job-event-store.js';
import { DEFAULT_JOB_EVENT_STORE_SETTINGS, jobEventStoreSettings, type JobEventStoreDurability } from './options.js';
import { CUT, EventWriteBuffer, type AppendResult } from './event-write-buffer.js';
import { realFlushTimer } from './flush-timer.js';
import { FlushScheduler } from './flush-scheduler.js';
import { reportAppend, reportFlush } from './metrics.js';

export type {
  EventFileHandle,
  FileSystemJobEventStoreOptions,
  JobEventStoreState,
  JobEventStoreStats,
  JobEventStoreStatus,
  OpenExclusive,
} from './file-system-job-event-store-types.js';
import type {
  FileSystemJobEventStoreOptions,
  JobEventStoreState,
  JobEventStoreStats,
  JobEventStoreStatus,
  OpenExclusive,
} from './file-system-job-event-store-types.js';
import { EventFileWriter } from './event-file-writer.js';

const openExclusiveDefault: OpenExclusive = (path) => open(path, 'wx');

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
  private readonly durability: JobEventStoreDurability;
  private readonly clock: Clock;
  private readonly logger: Logger;

  private state: JobEventStoreState = 'created';
  private failure: ReboundError | undefined;
  private readFiles: EventFileRef[] = [];
  private cursor: JobEventLogReader | undefined;

  private readonly buffer: EventWriteBuffer;
  private readonly flushes: FlushScheduler;
  private readonly writer: EventFileWriter;

  private readonly counters = {
    eventsWritten: 0,
    eventsDropped: 0,
    bytesWritten: 0,
    flushes: 0,
    fsyncs: 0,
    filesCreated: 0,
  };

  constructor(private readonly options: FileSystemJobEventStoreOptions) {
    const fromConfig = options.config ? jobEventStoreSettings(options.config) : DEFAULT_JOB_EVENT_STORE_SETTINGS;
    this.writeBufferSize = options.writeBufferSize ?? fromConfig.writeBufferSize;
    const flushIntervalMs = options.flushIntervalMs ?? fromConfig.flushIntervalMs;
    this.durability = options.durability ?? fromConfig.durability;
    if (!(this.writeBufferSize >= 1)) throw new RangeError('writeBufferSize must be at least 1 byte');
    if (!(flushIntervalMs >= 0)) throw new RangeError('flushIntervalMs must not be negative');
    this.jobId = options.jobId;
    this.epoch = options.epoch;
    this.directory = jobEventsDir(options.haDir, options.jobId);
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger()).child({
      component: 'job-event-store',
      jobId: options.jobId,
      epoch: options.epoch,
    });
    this.writer = new EventFileWriter({
      directory: this.directory,
      jobId: this.jobId,
      epoch: this.epoch,
      jobMasterId: options.jobMasterId,
      durability: this.durability,
      clock: this.clock,
      logger: this.logger,
      openExclusive: options.openExclusive ?? openExclusiveDefault,
      counters: this.counters,
    });
    this.buffer = new EventWriteBuffer(this.writeBufferSize, this.clock);
    this.flushes = new FlushScheduler(options.flushTimer ?? realFlushTimer, flushIntervalMs, () => this.flushOnce());
  }

  // ----------------------------------------------------------------------------- lifecycle

  async start(): Promise<void> {
    if (this.state === 'running') return;
    if (this.state === 'failed' || this.state === 'fenced') {
      throw new IllegalStateError(`job event store is ${this.state}; stop it before starting it again`);
    }
    this.readFiles = await listEventFiles(this.directory);
    this.writer.reset(this.readFiles.length > 0 ? this.readFiles[this.readFiles.length - 1]!.index + 1 : 0);
    this.cursor = undefined;
    this.failure = undefined;
    this.state = 'running';
    this.logger.debug(
      { event: 'job-event-store.start', files: this.readFiles.length, nextFile: this.writer.nextFileName },
      'job event store started',
    );
  }

  async stop(clear: boolean): Promise<void> {
    if (this.state === 'stopped') return;
    this.flushes.cancelTimer();
    if (this.state === 'running') {
      if (clear) this.dropPending();
      else await this.flushes.requestFlush();
    }
    await this.flushes.settled();
    await this.flushes.enqueue(() => this.closeFile());
    if (this.cursor) await this.cursor.close().catch(() => {});
    this.cursor = undefined;
    if (clear) await this.clear();
    this.state = 'stopped';
  }

  status(): JobEventStoreStatus {
    return { state: this.state, epoch: this.epoch, ...(this.failure ? { failure: this.failure } : {}) };
  }

  stats(): JobEventStoreStats {
    return { ...this.counters, pendingBytes: this.buffer.pendingBytes };
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
    let appended: AppendResult;
    try {
      appended = this.buffer.append(event, cutBlock);
    } catch (err) {
      // An event that cannot be encoded is a bug of the caller; skipping it would leave a log
      // that misses an event, so recording stops here and the log stays a valid prefix.
      this.counters.eventsDropped++;
      this.fail(err, `cannot encode a ${String(event.type)} event`);
      return;
    }
    this.counters.eventsWritten++;
    reportAppend(appended.frameLength);
    if (appended.outcome === 'flush') void this.flushes.requestFlush();
    else this.flushes.flushLater();
  }

  /** Writes (and fsyncs) everything enqueued so far; resolves when it is on disk. */
  flushNow(): Promise<void> {
    return this.flushes.requestFlush();
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
    this.buffer.cut();
    const seal = sealsOfReplay(replayed.files);
    void this.flushes.requestFlush();
    return this.flushes.enqueue(async () => {
      if (this.state !== 'running') return;
      this.writer.pendingSeal = seal;
      try {
        const leaderEpoch = await this.options.currentLeaderEpoch();
        if (leaderEpoch > this.epoch) return await this.fence(leaderEpoch);
        await this.writer.write([]);
        await this.writer.sync();
      } catch (err) {
        this.fail(err, 'cannot seal the job event log');
      }
    });
  }

  /** Resolves once no flush is running or queued (for tests: waits without triggering one). */
  idle(): Promise<void> {
    return this.flushes.idle();
  }

  private dropPending(): void {
    this.counters.eventsDropped += this.buffer.drop();
  }

  private async flushOnce(): Promise<void> {
    if (this.state !== 'running') return;
    this.flushes.cancelTimer();
    const { items, events, batches } = this.buffer.take();
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
          if (group.length > 0) await this.writer.write(group);
          group = [];
          await this.writer.sync();
          await this.writer.closeQuietly();
        } else {
          group.push(item);
        }
      }
      if (group.length > 0) await this.writer.write(group);
      await this.writer.sync();
      reportFlush(performance.now() - flushStart, this.counters.bytesWritten - bytesBefore);
    } catch (err) {
      this.counters.eventsDropped += events;
      this.fail(err, 'cannot write job events');
    } finally {
      // Every write of the items has settled: their buffers can take new events.
      this.buffer.recycle(batches);
    }
  }

  private async closeFile(): Promise<void> {
    if (!this.writer.currentFile) return;
    try {
      if (this.state === 'running') await this.writer.sync();
    } catch (err) {
      this.fail(err, 'cannot write job events');
    } finally {
      await this.writer.closeQuietly();
    }
  }

  // ----------------------------------------------------------------------------- disabling

  private fail(err: unknown, what: string): void {
    if (this.state !== 'running') return;
    this.state = 'failed';
    this.flushes.cancelTimer();
    this.dropPending();
    const failure =
      err instanceof ReboundError && !(err instanceof IllegalStateError)
        ? err
        : new JobEventStoreFailedError(`${what}: ${errorMessage(err)}`, { cause: err });
    this.failure = failure;
    this.logger.error(
      { event: 'job-event-store.failed', err, directory: this.directory, file: this.writer.currentFile },
      `${what}; recording of job events is disabled for job ${this.jobId} (the job keeps running, but a JobMaster failover will only recover what was recorded before)`,
    );
    this.options.onDisabled?.('failed', failure);
    void this.flushes.enqueue(() => this.writer.closeQuietly());
  }

  private async fence(leaderEpoch: number): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'fenced';
    this.flushes.cancelTimer();
    this.dropPending();
    const failure = new JobEventStoreFencedError(this.epoch, leaderEpoch);
    this.failure = failure;
    this.logger.warn({ event: 'job-event-store.fenced', leaderEpoch, directory: this.directory }, failure.message);
    this.options.onDisabled?.('fenced', failure);
    await this.writer.closeQuietly();
  }

  private async clear(): Promise<void> {
    if (this.state === 'fenced') {
      this.logger.warn(
        { event: 'job-event-store.clear-skipped' },
        'not clearing job events: this JobMaster was fenced',
      );
      return;
    }
    let leaderEpoch: number;
    try {
      leaderEpoch = await this.options.currentLeaderEpoch();
    } catch (err) {
      this.logger.warn(
        { event: 'job-event-store.clear-skipped', err },
        'not clearing job events: cannot tell the current leader epoch',
      );
      return;
    }
    if (leaderEpoch > this.epoch) {
      this.logger.warn(
        { event: 'job-event-store.clear-skipped', leaderEpoch },
        'not clearing job events: a newer JobMaster leads the job',
      );
      return;
    }
    try {
      await rm(this.directory, { recursive: true, force: true });
      this.logger.debug({ event: 'job-event-store.cleared', directory: this.directory }, 'job events cleared');
    } catch (err) {
      this.logger.warn(
        { event: 'job-event-store.clear-failed', err, directory: this.directory },
        'cannot delete job events',
      );
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
