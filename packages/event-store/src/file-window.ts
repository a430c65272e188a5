import { open, type FileHandle } from 'node:fs/promises';
import { crc32c } from '@rebound/core';
import { CRC_BYTES, FILE_MAGIC, FILE_PREFIX_BYTES } from './format.js';

/**
 * A read-ahead starts this far before the end of the current window, so that a record cut by
 * the window's end (up to this size) is whole in the next one without copying.
 */
const READ_AHEAD_OVERLAP = 64 * 1024;

/**
 * A file's size and how many bytes follow its header (the whole size when the header cannot be
 * read: unknown content counts as records); undefined if the file is gone.
 */
export async function recordBytesOf(path: string): Promise<{ size: number; afterHeader: number } | undefined> {
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
export async function readFully(
  fh: FileHandle,
  buf: Buffer,
  at: number,
  length: number,
  position: number,
): Promise<number> {
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
export class FileWindow {
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
