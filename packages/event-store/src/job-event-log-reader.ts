import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage } from '@rebound/core';
import { JobEventStoreCorruptError, JobEventStoreFailedError } from './errors.js';
import { RECORD_HEADER_BYTES, type EventFileRef } from './format.js';
import { collectSeals, type FileSeal } from './seals.js';
import { JOB_EVENT_TYPE_NAMES, type JobEventRecord, type JobEventType } from './job-event.js';

import { parseRecord, readFileHeader, type EventFileCursor } from './event-file-cursor.js';
import { FileWindow, recordBytesOf } from './file-window.js';
import type { EventFileInfo, ReplayCut, ReplayReport, TornTailReason } from './replay-report.js';

export interface JobEventLogReaderOptions {
  /** Files whose header names another job are corrupt. */
  jobId?: string;
  /** Bytes read from disk at a time. */
  readChunkBytes?: number;
}

const DEFAULT_READ_CHUNK = 1024 * 1024;

function emptyCounts(): Record<JobEventType, number> {
  return Object.fromEntries(JOB_EVENT_TYPE_NAMES.map((t) => [t, 0])) as Record<JobEventType, number>;
}

/**
 * Reads a job's event files in order: the longest valid prefix of the log. The first record that
 * is torn or fails its checksum ends the replay, in that file and for every later file, and is
 * reported (file, offset, bytes, reason, and whether a later file held records: see ReplayCut).
 * Only the tail of the newest file is an expected tear. Anything a crash cannot
 * explain (a checksummed record of unknown type or undecodable payload, another job's file, an
 * unknown format version) throws JobEventStoreCorruptError naming file and offset.
 */
export class JobEventLogReader implements AsyncIterable<JobEventRecord> {
  private readonly files: EventFileRef[];
  private nextFile = 0;
  private current: EventFileCursor | undefined;
  private maxEpoch = -1;
  private error: Error | undefined;
  private deferred: unknown;
  private pending: JobEventRecord[] = [];
  private pendingAt = 0;
  private readonly chunk: number;
  private readonly rep: ReplayReport;
  private seals: Map<number, FileSeal> | undefined;

  constructor(
    readonly directory: string,
    files: readonly EventFileRef[],
    private readonly options: JobEventLogReaderOptions = {},
  ) {
    this.files = [...files];
    this.chunk = options.readChunkBytes ?? DEFAULT_READ_CHUNK;
    this.rep = {
      directory,
      files: [],
      events: 0,
      eventsPerType: emptyCounts(),
      bytes: 0,
      discardedBytes: 0,
      tornTails: [],
      staleFiles: [],
      sealedTails: [],
      sealedBytes: 0,
    };
  }

  /** What has been read so far (complete once `next()` returned null or threw). */
  report(): ReplayReport {
    return {
      ...this.rep,
      files: this.rep.files.map((f) => ({ ...f })),
      eventsPerType: { ...this.rep.eventsPerType },
      tornTails: [...this.rep.tornTails],
      staleFiles: [...this.rep.staleFiles],
      sealedTails: [...this.rep.sealedTails],
      ...(this.rep.cut ? { cut: { ...this.rep.cut, laterFiles: [...this.rep.cut.laterFiles] } } : {}),
    };
  }

  /** The next event, or null after the last one. */
  async next(): Promise<JobEventRecord | null> {
    if (this.pending.length > this.pendingAt) return this.pending[this.pendingAt++]!;
    const batch = await this.nextBatch();
    if (batch.length === 0) return null;
    this.pending = batch;
    this.pendingAt = 1;
    return batch[0]!;
  }

  /**
   * The next events, as many as are already in memory (at most `max`); empty after the last
   * one. Replay goes through this so that it awaits once per read chunk, not once per event.
   */
  async nextBatch(max = 512): Promise<JobEventRecord[]> {
    if (this.error) throw this.error;
    if (this.pending.length > this.pendingAt) {
      const rest = this.pending.slice(this.pendingAt, this.pendingAt + max);
      this.pendingAt += rest.length;
      return rest;
    }
    const out: JobEventRecord[] = [];
    try {
      if (this.deferred !== undefined) throw this.deferred;
      this.seals ??= await collectSeals(this.directory, this.files);
      while (out.length === 0) {
        if (!this.current) {
          if (this.rep.cut && this.nextFile < this.files.length) await this.discardRest(this.rep.cut);
          if (this.nextFile >= this.files.length) return out;
          this.current = await this.openNext(this.files[this.nextFile++]!);
          continue;
        }
        const file = this.current;
        while (out.length < max) {
          let r: JobEventRecord | null | undefined;
          try {
            r = this.parseNext(file);
          } catch (err) {
            // The events before the corruption are delivered first; the error comes next call.
            if (out.length === 0) throw err;
            this.deferred = err;
            return out;
          }
          if (r) {
            out.push(r);
            continue;
          }
          if (r === null) {
            await this.closeCurrent();
            break;
          }
          if (out.length > 0) break;
          // The next record reaches past the window: read more of the file.
          if (!(await file.window.ensure(file.pos, file.need))) {
            this.torn(file, file.pos, file.need <= RECORD_HEADER_BYTES ? 'truncated-header' : 'truncated-record');
            await this.closeCurrent();
            break;
          }
          file.window.readAhead(file.pos);
        }
      }
      return out;
    } catch (err) {
      const failure =
        err instanceof JobEventStoreCorruptError || err instanceof JobEventStoreFailedError
          ? err
          : new JobEventStoreFailedError(`cannot read job event log in ${this.directory}: ${errorMessage(err)}`, {
              cause: err,
            });
      this.error = failure;
      if (failure instanceof JobEventStoreCorruptError) {
        this.rep.corruption = { file: failure.file, offset: failure.offset, message: failure.detail };
      }
      for (let i = this.nextFile; i < this.files.length; i++) {
        this.rep.files.push({ file: this.files[i]!.name, bytes: 0, historyBytes: 0, events: 0, status: 'unread' });
      }
      this.nextFile = this.files.length;
      await this.closeCurrent().catch(() => {});
      throw failure;
    }
  }

  async close(): Promise<void> {
    this.nextFile = this.files.length;
    await this.closeCurrent();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<JobEventRecord> {
    try {
      for (;;) {
        const record = await this.next();
        if (!record) return;
        yield record;
      }
    } finally {
      await this.close();
    }
  }

  private async closeCurrent(): Promise<void> {
    const c = this.current;
    this.current = undefined;
    if (c) {
      try {
        await c.window.drain();
      } finally {
        await c.fh.close();
      }
    }
  }

  private torn(file: EventFileCursor, offset: number, reason: TornTailReason): null {
    const bytes = file.window.size - offset;
    file.info.status = 'torn';
    this.rep.tornTails.push({ file: file.ref.name, offset, bytes, reason });
    this.rep.discardedBytes += bytes;
    // Later files (if any) are looked at before the next one would be opened: see discardRest.
    this.rep.cut = { file: file.ref.name, offset, reason, bytes, laterFiles: [], expected: true };
    return null;
  }

  /**
   * After a cut: the files after it are not replayed. Each is only sized and checked for records
   * after its header, to tell a tear at the end of the history from one inside it.
   */
  private async discardRest(cut: ReplayCut): Promise<void> {
    for (; this.nextFile < this.files.length; this.nextFile++) {
      const ref = this.files[this.nextFile]!;
      const records = await recordBytesOf(join(this.directory, ref.name));
      if (records === undefined) continue; // removed since listing: nothing was dropped
      this.rep.files.push({ file: ref.name, bytes: records.size, historyBytes: 0, events: 0, status: 'discarded' });
      this.rep.bytes += records.size;
      this.rep.discardedBytes += records.size;
      cut.bytes += records.size;
      cut.laterFiles.push(ref.name);
      if (records.afterHeader > 0) cut.expected = false;
    }
  }

  /** Opens a file and checks its header; undefined when there is nothing to read in it. */
  private async openNext(ref: EventFileRef): Promise<EventFileCursor | undefined> {
    const path = join(this.directory, ref.name);
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      // Cleared between listing and reading (a stop(clear) racing a dump): nothing to read.
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
    let keep = false;
    try {
      const fileSize = (await fh.stat()).size;
      const info: EventFileInfo = { file: ref.name, bytes: fileSize, historyBytes: 0, events: 0, status: 'complete' };
      this.rep.files.push(info);
      this.rep.bytes += fileSize;
      const size = this.applySeal(ref, info, fileSize);
      if (info.status === 'sealed') return undefined;
      const file: EventFileCursor = {
        ref,
        path,
        fh,
        window: new FileWindow(fh, size, this.chunk),
        info,
        epoch: 0,
        pos: 0,
        need: 0,
      };
      const checked = await readFileHeader(file, this.options.jobId);
      if (typeof checked === 'string') {
        this.torn(file, 0, checked);
        return undefined;
      }
      const { header, headerEnd } = checked;
      info.epoch = header.epoch;
      info.jobMasterId = header.jobmaster_id;
      info.createdAtMs = header.created_at_ms;
      if (header.epoch < this.maxEpoch) {
        info.status = 'stale';
        this.rep.staleFiles.push({ file: ref.name, epoch: header.epoch, newerEpoch: this.maxEpoch, bytes: size });
        return undefined;
      }
      this.maxEpoch = header.epoch;
      file.epoch = header.epoch;
      file.pos = headerEnd;
      info.historyBytes = headerEnd;
      file.window.readAhead(headerEnd);
      keep = true;
      return file;
    } finally {
      if (!keep) await fh.close();
    }
  }

  /**
   * The bytes of a file the reader may look at: all of them, or up to a newer leader's seal. The
   * rest is reported (never replayed, never a torn tail); 0 when the whole file is sealed out.
   */
  private applySeal(ref: EventFileRef, info: EventFileInfo, fileSize: number): number {
    const seal = this.seals?.get(ref.index);
    if (!seal || seal.length >= fileSize) return fileSize;
    const bytes = fileSize - seal.length;
    this.rep.sealedTails.push({ file: ref.name, length: seal.length, bytes, sealedBy: seal.sealedBy });
    this.rep.sealedBytes += bytes;
    if (seal.length === 0) info.status = 'sealed';
    return seal.length;
  }

  /**
   * Parses the record at `file.pos` from the window without I/O: the record, null at the end
   * of the file (clean or torn), or undefined when `file.need` bytes must be read first.
   */
  private parseNext(file: EventFileCursor): JobEventRecord | null | undefined {
    const r = parseRecord(file);
    if (typeof r === 'string') return this.torn(file, file.pos, r);
    if (r) {
      this.rep.events++;
      this.rep.eventsPerType[r.type]++;
    }
    return r;
  }
}
