import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c, errorMessage } from '@rebound/core';
import { JobEventStoreCorruptError, JobEventStoreFailedError } from './errors.js';
import {
  CRC_BYTES,
  FILE_FORMAT_VERSION,
  FILE_MAGIC,
  FILE_PREFIX_BYTES,
  PAYLOAD_VERSION,
  RECORD_HEADER_BYTES,
  RECORD_OVERHEAD_BYTES,
  decodeFileHeaderBody,
  readUInt32BE,
  readWrittenAt,
  type EventFileRef,
} from './format.js';
import { collectSeals, type FileSeal } from './seals.js';
import {
  JOB_EVENT_TYPE_NAMES,
  jobEventCodec,
  jobEventTypeOfId,
  type JobEventRecord,
  type JobEventType,
} from './job-event.js';

/**
 * Why the rest of a file was dropped. All three are what a crash in the middle of a write
 * leaves behind (a short write, or blocks the OS had not written yet, which read back as zeros).
 */
export type TornTailReason = 'truncated-header' | 'truncated-record' | 'checksum-mismatch';

export interface TornTail {
  file: string;
  /** Offset of the first discarded byte: the end of the last good record. */
  offset: number;
  /** Bytes from `offset` to the end of the file. */
  bytes: number;
  reason: TornTailReason;
}

/**
 * Where replay stopped because a record could not be read (a torn or corrupt record). The log is
 * a single history: records after a bad one may depend on what it said, so nothing after it —
 * in that file or in any later file — is replayed; the executions it recorded are unknown to the
 * new leader (their tasks rerun, their partitions are released).
 */
export interface ReplayCut {
  /** The file and offset of the first record that could not be read. */
  file: string;
  offset: number;
  reason: TornTailReason;
  /** Bytes not replayed: the rest of that file plus every later file. */
  bytes: number;
  /** Later files not replayed. */
  laterFiles: string[];
  /**
   * True when no record follows the cut in a later file: the tail of the newest file, which is
   * what a crash mid-write leaves. False means history written after the damage (by this or a
   * later JobMaster) is being dropped: damage no crash of the newest writer explains.
   */
  expected: boolean;
}

/**
 * A file written by an older epoch after a newer epoch had already created a file: a fenced
 * JobMaster that raced past its fencing check. Its records are not part of the job's history.
 */
export interface StaleFile {
  file: string;
  epoch: number;
  newerEpoch: number;
  bytes: number;
}

/** Bytes a newer leader's seal cut off a file: what a fenced predecessor appended after it was deposed. */
export interface SealedTail {
  file: string;
  /** The sealed length: bytes from here on are not history. */
  length: number;
  bytes: number;
  /** The file whose header holds the seal. */
  sealedBy: string;
}

export interface EventFileInfo {
  file: string;
  bytes: number;
  /**
   * Bytes of the file that are the replayed history: up to the end of its last good record (0
   * when nothing of it was replayed). What a new leader seals the file at.
   */
  historyBytes: number;
  /** Undefined when the header itself was torn. */
  epoch?: number;
  jobMasterId?: string;
  createdAtMs?: number;
  events: number;
  /**
   * 'discarded': not replayed because an earlier file has a torn or corrupt record (see ReplayCut);
   * 'sealed': a newer leader sealed the whole file out (see SealedTail).
   */
  status: 'complete' | 'torn' | 'stale' | 'corrupt' | 'unread' | 'discarded' | 'sealed';
}

export interface ReplayReport {
  directory: string;
  files: EventFileInfo[];
  events: number;
  eventsPerType: Record<JobEventType, number>;
  /** Total size of the files looked at. */
  bytes: number;
  /** Bytes not replayed: the torn tail and every later file (the recovery report shows this). */
  discardedBytes: number;
  /** At most one: replay stops at the first torn record. */
  tornTails: TornTail[];
  /** Set when replay stopped before the end of the log. */
  cut?: ReplayCut;
  staleFiles: StaleFile[];
  /** Bytes beyond a seal, per file: ignored, never replayed (see seals.ts). */
  sealedTails: SealedTail[];
  sealedBytes: number;
  corruption?: { file: string; offset: number; message: string };
}

export interface JobEventLogReaderOptions {
  /** Files whose header names another job are corrupt. */
  jobId?: string;
  /** Bytes read from disk at a time. */
  readChunkBytes?: number;
}

const DEFAULT_READ_CHUNK = 1024 * 1024;
/**
 * A read-ahead starts this far before the end of the current window, so that a record cut by
 * the window's end (up to this size) is whole in the next one without copying.
 */
const READ_AHEAD_OVERLAP = 64 * 1024;

/**
 * A file's size and how many bytes follow its header (the whole size when the header cannot be
 * read: unknown content counts as records); undefined if the file is gone.
 */
async function recordBytesOf(path: string): Promise<{ size: number; afterHeader: number } | undefined> {
  let fh: FileHandle;
  try {
    fh = await open(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const size = (await fh.stat()).size;
    const prefix = Buffer.alloc(FILE_PREFIX_BYTES);
    const got = await readFully(fh, prefix, 0, FILE_PREFIX_BYTES, 0);
    if (got < FILE_PREFIX_BYTES) return { size, afterHeader: 0 };
    if (FILE_MAGIC.compare(prefix, 0, 4) !== 0) return { size, afterHeader: prefix.every((x) => x === 0) ? 0 : size };
    const headerEnd = FILE_PREFIX_BYTES + ((prefix[6]! << 8) | prefix[7]!) + CRC_BYTES;
    return { size, afterHeader: Math.max(0, size - headerEnd) };
  } finally {
    await fh.close();
  }
}

/** Reads [position, position + length) into buf[at...]; fewer bytes only at the end of the file. */
async function readFully(fh: FileHandle, buf: Buffer, at: number, length: number, position: number): Promise<number> {
  let got = 0;
  while (got < length) {
    const { bytesRead } = await fh.read(buf, at + got, length - got, position + got);
    if (bytesRead === 0) break;
    got += bytesRead;
  }
  return got;
}

/**
 * A sliding window over a file, refilled from disk only when a record reaches past it. A file
 * larger than one window is read ahead: the buffer has two halves, and while the records of one
 * are parsed the next part of the file is read into the other (I/O off the parsing thread).
 */
class FileWindow {
  buf!: Buffer;
  /** File offset of buf[0] (buf[0] itself need not hold file bytes). */
  start = 0;
  /** buf[lo, hi) holds the file's bytes [start + lo, start + hi). */
  lo = 0;
  hi = 0;
  /** Bytes per half when reading ahead; 0 for a single-window buffer. */
  private halfBytes: number;
  /** The half holding the window. */
  private half = 0;
  private readonly overlap: number;
  /** A read into the other half: true once it holds [aheadFrom, aheadFrom + aheadBytes). */
  private ahead: Promise<boolean> | undefined;
  private aheadFrom = 0;
  private aheadBytes = 0;

  constructor(
    private readonly fh: FileHandle,
    public size: number,
    private readonly chunk: number,
  ) {
    this.overlap = Math.min(READ_AHEAD_OVERLAP, chunk);
    if (size > chunk) {
      this.halfBytes = chunk + this.overlap;
      this.allocate(2 * this.halfBytes);
    } else {
      this.halfBytes = 0;
      this.allocate(Math.max(size, 64));
    }
  }

  private allocate(bytes: number): Buffer {
    this.buf = Buffer.allocUnsafe(bytes);
    return this.buf;
  }

  /** CRC-32C of buf[start, end). */
  crc32c(start: number, end: number): number {
    return crc32c(this.buf, start, end);
  }

  /**
   * Makes [offset, offset + n) available in `buf`. False if the file ended before (it shrank
   * since it was opened): the caller treats that like any truncation.
   */
  async ensure(offset: number, n: number): Promise<boolean> {
    const at = offset - this.start;
    if (at >= this.lo && at + n <= this.hi) return true;
    // Nothing may touch the buffer while a read into it is in flight.
    const ahead = this.ahead;
    this.ahead = undefined;
    const aheadReady = ahead !== undefined && (await ahead);
    const want = Math.min(Math.max(n, this.chunk), this.size - offset);
    if (want < n) return false;
    if (aheadReady && offset >= this.aheadFrom && offset + n <= this.aheadFrom + this.aheadBytes) {
      this.half = 1 - this.half;
      this.start = this.aheadFrom - this.half * this.halfBytes;
      this.lo = offset - this.start;
      this.hi = this.half * this.halfBytes + this.aheadBytes;
      return true;
    }
    let kept = 0;
    if (at >= this.lo && at < this.hi) kept = this.hi - at;
    // The window goes to the start of the buffer (the first half): room for `want` bytes there.
    const room = this.halfBytes > 0 ? this.halfBytes : this.buf.length;
    if (room < want) {
      const bytes = this.halfBytes > 0 ? 2 * (want + this.overlap) : want;
      const previous = this.buf;
      const next = this.allocate(bytes);
      if (kept > 0) previous.copy(next, 0, at, at + kept);
      if (this.halfBytes > 0) this.halfBytes = bytes >>> 1;
    } else if (kept > 0) {
      this.buf.copyWithin(0, at, at + kept);
    }
    this.half = 0;
    this.start = offset;
    this.lo = 0;
    this.hi = kept;
    const got = await readFully(this.fh, this.buf, kept, want - kept, offset + kept);
    this.hi += got;
    if (this.hi < want) {
      this.size = offset + this.hi;
      return this.hi >= n;
    }
    return true;
  }

  /** Index in `buf` of a file offset inside the window. */
  at(offset: number): number {
    return offset - this.start;
  }

  /**
   * The records from file offset `recordOffset` to the end of the window are next: reads the
   * part of the file after the window ahead, overlapping the window's end.
   */
  readAhead(recordOffset: number): void {
    const end = this.start + this.hi;
    if (this.halfBytes === 0 || this.ahead !== undefined || end >= this.size) return;
    const from = Math.max(end - this.overlap, recordOffset);
    const bytes = Math.min(this.halfBytes, this.size - from);
    this.aheadFrom = from;
    this.aheadBytes = bytes;
    // A failed read-ahead is just not used: the read is repeated, and its error reported, then.
    this.ahead = readFully(this.fh, this.buf, (1 - this.half) * this.halfBytes, bytes, from).then(
      (got) => got === bytes,
      () => false,
    );
  }

  /** Waits for a read-ahead in flight: before the file is closed or the buffer reused. */
  async drain(): Promise<void> {
    const ahead = this.ahead;
    this.ahead = undefined;
    if (ahead) await ahead;
  }
}

interface OpenFile {
  ref: EventFileRef;
  path: string;
  fh: FileHandle;
  window: FileWindow;
  info: EventFileInfo;
  epoch: number;
  pos: number;
  /** Bytes from `pos` the parser needs in the window. */
  need: number;
}

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
  private current: OpenFile | undefined;
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
          : new JobEventStoreFailedError(`cannot read job event log in ${this.directory}: ${errorMessage(err)}`, { cause: err });
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

  private corrupt(file: OpenFile, offset: number, detail: string, cause?: unknown): JobEventStoreCorruptError {
    file.info.status = 'corrupt';
    return new JobEventStoreCorruptError(file.ref.name, offset, detail, file.path, cause === undefined ? undefined : { cause });
  }

  private torn(file: OpenFile, offset: number, reason: TornTailReason): null {
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
  private async openNext(ref: EventFileRef): Promise<OpenFile | undefined> {
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
      const file: OpenFile = { ref, path, fh, window: new FileWindow(fh, size, this.chunk), info, epoch: 0, pos: 0, need: 0 };
      const w = file.window;
      if (!(await w.ensure(0, FILE_PREFIX_BYTES))) {
        this.torn(file, 0, 'truncated-header');
        return undefined;
      }
      let b = w.buf;
      const p0 = w.at(0);
      if (FILE_MAGIC.compare(b, p0, p0 + 4) !== 0) {
        if (b.subarray(p0, p0 + FILE_PREFIX_BYTES).every((x) => x === 0)) {
          // Zeros: the file's first write never reached the disk.
          this.torn(file, 0, 'checksum-mismatch');
          return undefined;
        }
        throw this.corrupt(file, 0, 'not a job event file (bad magic)');
      }
      const version = (b[p0 + 4]! << 8) | b[p0 + 5]!;
      if (version < 1 || version > FILE_FORMAT_VERSION) {
        throw this.corrupt(file, 0, `unsupported file format version ${version} (this reader knows up to ${FILE_FORMAT_VERSION})`);
      }
      const headerLen = (b[p0 + 6]! << 8) | b[p0 + 7]!;
      const headerEnd = FILE_PREFIX_BYTES + headerLen + CRC_BYTES;
      if (!(await w.ensure(0, headerEnd))) {
        this.torn(file, 0, 'truncated-header');
        return undefined;
      }
      b = w.buf;
      const h = w.at(0);
      if (crc32c(b, h, h + FILE_PREFIX_BYTES + headerLen) !== readUInt32BE(b, h + FILE_PREFIX_BYTES + headerLen)) {
        this.torn(file, 0, 'checksum-mismatch');
        return undefined;
      }
      let header;
      try {
        header = decodeFileHeaderBody(b, h + FILE_PREFIX_BYTES, h + FILE_PREFIX_BYTES + headerLen);
      } catch (err) {
        throw this.corrupt(file, 0, `undecodable file header: ${errorMessage(err)}`, err);
      }
      if (this.options.jobId !== undefined && header.job_id !== this.options.jobId) {
        throw this.corrupt(file, 0, `file belongs to job ${header.job_id}, not ${this.options.jobId}`);
      }
      if (header.payload_version < 1 || header.payload_version > PAYLOAD_VERSION) {
        throw this.corrupt(file, 0, `unsupported payload version ${header.payload_version}`);
      }
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
      w.readAhead(headerEnd);
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
  private parseNext(file: OpenFile): JobEventRecord | null | undefined {
    const w = file.window;
    const offset = file.pos;
    const remaining = w.size - offset;
    if (remaining === 0) return null;
    if (remaining < RECORD_HEADER_BYTES) return this.torn(file, offset, 'truncated-header');
    const windowEnd = w.start + w.hi;
    if (offset + RECORD_HEADER_BYTES > windowEnd) {
      file.need = RECORD_HEADER_BYTES;
      return undefined;
    }
    const b = w.buf;
    const p = offset - w.start;
    const payloadLength = readUInt32BE(b, p + 4);
    const frame = RECORD_OVERHEAD_BYTES + payloadLength;
    if (frame > remaining) return this.torn(file, offset, 'truncated-record');
    if (offset + frame > windowEnd) {
      file.need = frame;
      return undefined;
    }
    const crcAt = p + RECORD_HEADER_BYTES + payloadLength;
    if (w.crc32c(p, crcAt) !== readUInt32BE(b, crcAt)) return this.torn(file, offset, 'checksum-mismatch');
    const typeId = b[p]!;
    const type = jobEventTypeOfId(typeId);
    if (type === undefined) throw this.corrupt(file, offset, `unknown record type ${typeId}`);
    const version = b[p + 1]!;
    if (version < 1 || version > PAYLOAD_VERSION) {
      throw this.corrupt(file, offset, `unsupported payload version ${version} of a ${type} record`);
    }
    if (b[p + 2] !== 0 || b[p + 3] !== 0) throw this.corrupt(file, offset, `unknown record flags of a ${type} record`);
    let event;
    try {
      event = jobEventCodec(type).decode(b, p + RECORD_HEADER_BYTES, crcAt);
    } catch (err) {
      throw this.corrupt(file, offset, `undecodable ${type} payload: ${errorMessage(err)}`, err);
    }
    file.pos = offset + frame;
    file.info.historyBytes = file.pos;
    file.info.events++;
    this.rep.events++;
    this.rep.eventsPerType[type]++;
    return { type, event, file: file.ref.name, offset, writtenAtMs: readWrittenAt(b, p), epoch: file.epoch } as JobEventRecord;
  }
}
