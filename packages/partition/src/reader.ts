import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { PartitionNotFoundError } from '@rebound/core';
import { DATA_FILE, PartitionCorruptError, verifyBlock } from './format.js';
import type { FinishedPartition } from './writer.js';

export interface SubpartitionReadOptions {
  /** Stops the read between blocks (the consumer went away). */
  signal?: AbortSignal;
}

export interface ReaderCallbacks {
  onBlockRead(bytes: number): void;
  onCorrupt(partition: FinishedPartition, err: PartitionCorruptError): void;
}

type ReadResult = { ok: true; block: Buffer } | { ok: false; error: unknown };

interface Location {
  subpartition: number;
  offset: number;
  length: number;
}

function* locations(p: FinishedPartition, start: number, end: number): Generator<Location> {
  for (let s = start; s <= end; s++) {
    const { offsets, lengths } = p.blocks[s]!;
    for (let i = 0; i < offsets.length; i++) yield { subpartition: s, offset: offsets[i]!, length: lengths[i]! };
  }
}

async function readFully(fh: FileHandle, p: FinishedPartition, loc: Location): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(loc.length);
  let done = 0;
  while (done < loc.length) {
    const { bytesRead } = await fh.read(buf, done, loc.length - done, loc.offset + done);
    if (bytesRead === 0) {
      throw new PartitionCorruptError(
        p.key,
        `data file ends inside the block at offset ${loc.offset} (read ${done} of ${loc.length} bytes)`,
      );
    }
    done += bytesRead;
  }
  return buf;
}

/**
 * Streams the block payloads of subpartitions start..end (inclusive) in order, with positional
 * reads and one block of read-ahead, so a reader holds at most two blocks however large the
 * partition is. Each block is checked against the index and its CRC before it is handed out.
 */
export async function* readSubpartitionBlocks(
  p: FinishedPartition,
  start: number,
  end: number,
  callbacks: ReaderCallbacks,
  options: SubpartitionReadOptions = {},
): AsyncGenerator<Buffer, void, undefined> {
  let fh: FileHandle;
  try {
    fh = await open(join(p.dir, DATA_FILE), 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT')
      throw new PartitionNotFoundError(p.key, 'its data file is gone');
    throw err;
  }
  const it = locations(p, start, end);
  // Reads never reject: a rejection that waits while the consumer is slow would be reported as
  // unhandled.
  const readAt = (loc: Location): Promise<ReadResult> =>
    readFully(fh, p, loc).then(
      (block): ReadResult => {
        callbacks.onBlockRead(block.length);
        return { ok: true, block };
      },
      (error: unknown): ReadResult => ({ ok: false, error }),
    );
  let current = it.next();
  let inFlight: Promise<ReadResult> | undefined = current.done ? undefined : readAt(current.value);
  try {
    while (inFlight && !current.done) {
      if (options.signal?.aborted) return;
      const loc: Location = current.value;
      const result = await inFlight;
      inFlight = undefined;
      if (!result.ok) throw result.error;
      current = it.next();
      if (!current.done) inFlight = readAt(current.value);
      yield verifyBlock(p.key, result.block, loc.subpartition, loc.offset);
    }
  } catch (err) {
    if (err instanceof PartitionCorruptError) callbacks.onCorrupt(p, err);
    throw err;
  } finally {
    // The handle may only close once no read uses it.
    if (inFlight) await inFlight;
    await fh.close().catch(() => {});
  }
}
