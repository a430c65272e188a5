import type { FileHandle } from 'node:fs/promises';
import { crc32c, errorMessage, type JobEventFileHeader__Output } from '@rebound/core';
import { JobEventStoreCorruptError } from './errors.js';
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
import { jobEventCodec, jobEventTypeOfId, type JobEventRecord } from './job-event.js';
import type { FileWindow } from './file-window.js';
import type { EventFileInfo, TornTailReason } from './replay-report.js';

/**
 * One event file as JobEventLogReader reads it. What a file says about itself is checked here;
 * what it means for the log (epochs, cuts, the report) is the reader's.
 */
export interface EventFileCursor {
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

function corrupt(file: EventFileCursor, offset: number, detail: string, cause?: unknown): JobEventStoreCorruptError {
  file.info.status = 'corrupt';
  return new JobEventStoreCorruptError(
    file.ref.name,
    offset,
    detail,
    file.path,
    cause === undefined ? undefined : { cause },
  );
}

/**
 * Checks the header at the start of the file: the header and where its records begin, or why the
 * file is torn at offset 0. A header no crash explains throws JobEventStoreCorruptError.
 */
export async function readFileHeader(
  file: EventFileCursor,
  jobId: string | undefined,
): Promise<{ header: JobEventFileHeader__Output; headerEnd: number } | TornTailReason> {
  const w = file.window;
  if (!(await w.ensure(0, FILE_PREFIX_BYTES))) return 'truncated-header';
  let b = w.buf;
  const p0 = w.at(0);
  if (FILE_MAGIC.compare(b, p0, p0 + 4) !== 0) {
    // Zeros: the file's first write never reached the disk.
    if (b.subarray(p0, p0 + FILE_PREFIX_BYTES).every((x) => x === 0)) return 'checksum-mismatch';
    throw corrupt(file, 0, 'not a job event file (bad magic)');
  }
  const version = (b[p0 + 4]! << 8) | b[p0 + 5]!;
  if (version < 1 || version > FILE_FORMAT_VERSION) {
    throw corrupt(
      file,
      0,
      `unsupported file format version ${version} (this reader knows up to ${FILE_FORMAT_VERSION})`,
    );
  }
  const headerLen = (b[p0 + 6]! << 8) | b[p0 + 7]!;
  const headerEnd = FILE_PREFIX_BYTES + headerLen + CRC_BYTES;
  if (!(await w.ensure(0, headerEnd))) return 'truncated-header';
  b = w.buf;
  const h = w.at(0);
  if (crc32c(b, h, h + FILE_PREFIX_BYTES + headerLen) !== readUInt32BE(b, h + FILE_PREFIX_BYTES + headerLen)) {
    return 'checksum-mismatch';
  }
  let header;
  try {
    header = decodeFileHeaderBody(b, h + FILE_PREFIX_BYTES, h + FILE_PREFIX_BYTES + headerLen);
  } catch (err) {
    throw corrupt(file, 0, `undecodable file header: ${errorMessage(err)}`, err);
  }
  if (jobId !== undefined && header.job_id !== jobId) {
    throw corrupt(file, 0, `file belongs to job ${header.job_id}, not ${jobId}`);
  }
  if (header.payload_version < 1 || header.payload_version > PAYLOAD_VERSION) {
    throw corrupt(file, 0, `unsupported payload version ${header.payload_version}`);
  }
  return { header, headerEnd };
}

/**
 * Parses the record at `file.pos` from the window without I/O: the record, null at the clean end
 * of the file, why the rest of the file is torn, or undefined when `file.need` bytes must be read
 * first.
 */
export function parseRecord(file: EventFileCursor): JobEventRecord | TornTailReason | null | undefined {
  const w = file.window;
  const offset = file.pos;
  const remaining = w.size - offset;
  if (remaining === 0) return null;
  if (remaining < RECORD_HEADER_BYTES) return 'truncated-header';
  const windowEnd = w.start + w.hi;
  if (offset + RECORD_HEADER_BYTES > windowEnd) {
    file.need = RECORD_HEADER_BYTES;
    return undefined;
  }
  const b = w.buf;
  const p = offset - w.start;
  const payloadLength = readUInt32BE(b, p + 4);
  const frame = RECORD_OVERHEAD_BYTES + payloadLength;
  if (frame > remaining) return 'truncated-record';
  if (offset + frame > windowEnd) {
    file.need = frame;
    return undefined;
  }
  const crcAt = p + RECORD_HEADER_BYTES + payloadLength;
  if (w.crc32c(p, crcAt) !== readUInt32BE(b, crcAt)) return 'checksum-mismatch';
  const typeId = b[p]!;
  const type = jobEventTypeOfId(typeId);
  if (type === undefined) throw corrupt(file, offset, `unknown record type ${typeId}`);
  const version = b[p + 1]!;
  if (version < 1 || version > PAYLOAD_VERSION) {
    throw corrupt(file, offset, `unsupported payload version ${version} of a ${type} record`);
  }
  if (b[p + 2] !== 0 || b[p + 3] !== 0) throw corrupt(file, offset, `unknown record flags of a ${type} record`);
  let event;
  try {
    event = jobEventCodec(type).decode(b, p + RECORD_HEADER_BYTES, crcAt);
  } catch (err) {
    throw corrupt(file, offset, `undecodable ${type} payload: ${errorMessage(err)}`, err);
  }
  file.pos = offset + frame;
  file.info.historyBytes = file.pos;
  file.info.events++;
  return {
    type,
    event,
    file: file.ref.name,
    offset,
    writtenAtMs: readWrittenAt(b, p),
    epoch: file.epoch,
  } as JobEventRecord;
}
