import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { JobEventFileHeader, JobEventFileHeader__Output } from '@rebound/core';
import { crc32c } from '@rebound/core';
import { messageCodec } from './proto-codec.js';

/*
 * On-disk format of the job event log (see ../README.md for the full description).
 *
 * File events.<N>:
 *   "RBJE" | u16 format version | u16 header length L | JobEventFileHeader (L bytes) | u32 CRC32C
 * then records:
 *   u8 type | u8 payload version | u16 flags | u32 payload length P | u64 written-at ms
 *   | payload (P bytes) | u32 CRC32C of everything before it in the record
 * All integers big-endian.
 */

export const FILE_MAGIC = Buffer.from('RBJE', 'latin1');
export const FILE_FORMAT_VERSION = 1;
/** Version 1: the payload is the binary protobuf of the rebound.v1 event message. */
export const PAYLOAD_VERSION = 1;
/** magic (4) + format version (2) + header length (2). */
export const FILE_PREFIX_BYTES = 8;
export const RECORD_HEADER_BYTES = 16;
export const CRC_BYTES = 4;
export const RECORD_OVERHEAD_BYTES = RECORD_HEADER_BYTES + CRC_BYTES;

export const EVENT_FILE_PREFIX = 'events.';

const TWO_32 = 4294967296;

export function eventFileName(index: number): string {
  return `${EVENT_FILE_PREFIX}${index}`;
}

/** The N of `events.<N>`, or undefined for any other name (temporary or foreign files). */
export function parseEventFileName(name: string): number | undefined {
  const m = /^events\.(0|[1-9]\d{0,15})$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

export interface EventFileRef {
  name: string;
  index: number;
}

/** The event files of a job-events directory in index order; [] if the directory is missing. */
export async function listEventFiles(dir: string): Promise<EventFileRef[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const files: EventFileRef[] = [];
  for (const name of names) {
    const index = parseEventFileName(name);
    if (index !== undefined) files.push({ name, index });
  }
  return files.sort((a, b) => a.index - b.index);
}

export function jobEventsDir(haDir: string, jobId: string): string {
  return join(haDir, 'jobs', jobId, 'job-events');
}

const headerCodec = () => messageCodec<JobEventFileHeader, JobEventFileHeader__Output>('JobEventFileHeader');

export function encodeFileHeader(header: JobEventFileHeader): Buffer {
  const body = headerCodec().encode(header);
  if (body.length > 0xffff) throw new RangeError('job event file header too large');
  const out = Buffer.allocUnsafe(FILE_PREFIX_BYTES + body.length + CRC_BYTES);
  FILE_MAGIC.copy(out, 0);
  out.writeUInt16BE(FILE_FORMAT_VERSION, 4);
  out.writeUInt16BE(body.length, 6);
  out.set(body, FILE_PREFIX_BYTES);
  out.writeUInt32BE(crc32c(out, 0, FILE_PREFIX_BYTES + body.length), FILE_PREFIX_BYTES + body.length);
  return out;
}

export function decodeFileHeaderBody(bytes: Uint8Array, start: number, end: number): JobEventFileHeader__Output {
  return headerCodec().decode(bytes, start, end);
}

/** Writes a record header at `buf[pos]`. */
export function writeRecordHeader(
  buf: Buffer,
  pos: number,
  typeId: number,
  payloadLength: number,
  writtenAtMs: number,
): void {
  buf[pos] = typeId;
  buf[pos + 1] = PAYLOAD_VERSION;
  buf[pos + 2] = 0;
  buf[pos + 3] = 0;
  writeUInt32BE(buf, pos + 4, payloadLength);
  const ms = Math.max(0, Math.floor(writtenAtMs));
  writeUInt32BE(buf, pos + 8, Math.floor(ms / TWO_32));
  writeUInt32BE(buf, pos + 12, ms);
}

/** Writes the low 32 bits of `v` at `b[p]`, big-endian (unchecked: the caller made room). */
export function writeUInt32BE(b: Uint8Array, p: number, v: number): void {
  b[p] = v >>> 24;
  b[p + 1] = v >>> 16;
  b[p + 2] = v >>> 8;
  b[p + 3] = v;
}

export function readUInt32BE(b: Uint8Array, p: number): number {
  return ((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0;
}

export function readWrittenAt(b: Uint8Array, p: number): number {
  return readUInt32BE(b, p + 8) * TWO_32 + readUInt32BE(b, p + 12);
}
