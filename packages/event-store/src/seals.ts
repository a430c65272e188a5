import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { SealedEventFile } from '@rebound/core';
import { crc32c } from '@rebound/core';
import {
  CRC_BYTES,
  FILE_FORMAT_VERSION,
  FILE_MAGIC,
  FILE_PREFIX_BYTES,
  decodeFileHeaderBody,
  parseEventFileName,
  readUInt32BE,
  type EventFileRef,
} from './format.js';

/*
 * The sealed-file fence.
 *
 * The writer's epoch check runs before each flush, so a JobMaster paused between that check and
 * its write (GC, SIGSTOP, a slow disk) still appends to the file it already holds open after a
 * newer leader has replayed the log. Those bytes sit inside an older file, ahead of the new
 * leader's files, and carry a valid checksum: by position and epoch alone a reader cannot tell
 * them from history.
 *
 * So a leader that takes a job over seals its predecessors' files before it acts: the header of
 * its first file records how long each earlier file was when it replayed it (see
 * JobEventFileHeader.seals_earlier_files). Any later reader cuts each file at the shortest seal a
 * later, non-stale file put on it. The seal is written and fsynced right after replay, before the
 * new leader deploys anything, so every decision it makes is made on exactly the sealed history.
 */

export interface FileSeal {
  /** Bytes of the file that are history (its header included); 0: none of it. */
  length: number;
  /** The file whose header set this (the shortest) seal. */
  sealedBy: string;
}

interface HeaderSeals {
  index: number;
  name: string;
  epoch: number;
  sealsEarlier: boolean;
  sealed: Map<number, number>;
}

/** The header of one file, or undefined when it is torn, missing or not an event file. */
async function readHeaderSeals(directory: string, ref: EventFileRef): Promise<HeaderSeals | undefined> {
  let fh;
  try {
    fh = await open(join(directory, ref.name), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    const prefix = Buffer.alloc(FILE_PREFIX_BYTES);
    const { bytesRead } = await fh.read(prefix, 0, FILE_PREFIX_BYTES, 0);
    if (bytesRead < FILE_PREFIX_BYTES || FILE_MAGIC.compare(prefix, 0, 4) !== 0) return undefined;
    const version = prefix.readUInt16BE(4);
    if (version < 1 || version > FILE_FORMAT_VERSION) return undefined;
    const headerLength = prefix.readUInt16BE(6);
    const whole = Buffer.alloc(FILE_PREFIX_BYTES + headerLength + CRC_BYTES);
    const got = await fh.read(whole, 0, whole.length, 0);
    if (got.bytesRead < whole.length) return undefined;
    const crcAt = FILE_PREFIX_BYTES + headerLength;
    if (crc32c(whole, 0, crcAt) !== readUInt32BE(whole, crcAt)) return undefined;
    // An undecodable header is reported as corruption by the reader proper, not here.
    let header;
    try {
      header = decodeFileHeaderBody(whole, FILE_PREFIX_BYTES, crcAt);
    } catch {
      return undefined;
    }
    const sealed = new Map<number, number>();
    for (const s of header.sealed_files) sealed.set(s.file_index, s.length);
    return { index: ref.index, name: ref.name, epoch: header.epoch, sealsEarlier: header.seals_earlier_files, sealed };
  } finally {
    await fh.close();
  }
}

/**
 * The seal on each file of `files` (index order), keyed by file index; files without one are
 * absent. A stale file (an older epoch than a file before it: a fenced writer that created a
 * file after a newer leader had) seals nothing.
 */
export async function collectSeals(directory: string, files: readonly EventFileRef[]): Promise<Map<number, FileSeal>> {
  const seals = new Map<number, FileSeal>();
  let maxEpoch = -1;
  const headers: HeaderSeals[] = [];
  for (const ref of files) {
    const h = await readHeaderSeals(directory, ref);
    if (!h) continue;
    if (h.epoch < maxEpoch) continue;
    maxEpoch = h.epoch;
    headers.push(h);
  }
  // Newest first: a sealer that a newer one sealed out (it created its file after the newer
  // leader had listed the log) is not history, and neither are its seals.
  for (const sealer of headers.reverse()) {
    if (!sealer.sealsEarlier || seals.get(sealer.index)?.length === 0) continue;
    for (const ref of files) {
      if (ref.index >= sealer.index) break;
      const length = sealer.sealed.get(ref.index) ?? 0;
      const current = seals.get(ref.index);
      if (!current || length < current.length) seals.set(ref.index, { length, sealedBy: sealer.name });
    }
  }
  return seals;
}

/**
 * What a new leader seals after replaying: each replayed file up to the end of the last record
 * it applied. Files it did not apply anything from are left out, which seals them at length 0.
 */
export function sealsOfReplay(
  files: readonly { readonly file: string; readonly historyBytes: number }[],
): SealedEventFile[] {
  const out: SealedEventFile[] = [];
  for (const f of files) {
    const index = parseEventFileName(f.file);
    if (index === undefined || f.historyBytes <= 0) continue;
    out.push({ file_index: index, length: f.historyBytes });
  }
  return out;
}
