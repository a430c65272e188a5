import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fsyncDir, type Clock, type Logger, type SealedEventFile } from '@rebound/core';
import { JobEventStoreFailedError } from './errors.js';
import { PAYLOAD_VERSION, encodeFileHeader, eventFileName } from './format.js';
import type { EventFileHandle, OpenExclusive } from './file-system-job-event-store-types.js';
import type { JobEventStoreDurability } from './options.js';

export interface EventFileWriterOptions {
  readonly directory: string;
  readonly jobId: string;
  readonly epoch: number;
  readonly jobMasterId: string | undefined;
  readonly durability: JobEventStoreDurability;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly openExclusive: OpenExclusive;
  /** The store's counters, which this writer adds its bytes, fsyncs and files to. */
  readonly counters: { bytesWritten: number; fsyncs: number; filesCreated: number };
}

interface CurrentFile {
  handle: EventFileHandle;
  name: string;
  /** Written since the last sync. */
  dirty: boolean;
  /** Its directory entry is not yet fsynced. */
  newEntry: boolean;
}

/**
 * The files one attempt of a FileSystemJobEventStore writes: creates each exclusively with its
 * header, appends, syncs and closes. The store decides when; this decides how, so that nothing
 * here knows about fencing or failure.
 */
export class EventFileWriter {
  private nextIndex = 0;
  private dirReady = false;
  private file: CurrentFile | undefined;
  /** Goes into the header of the next file this attempt creates (see sealHistory). */
  pendingSeal: SealedEventFile[] | undefined;

  constructor(private readonly options: EventFileWriterOptions) {}

  /** Starts over after the store (re)started: the next file is `nextIndex`, the directory unchecked. */
  reset(nextIndex: number): void {
    this.nextIndex = nextIndex;
    this.dirReady = false;
  }

  get nextFileName(): string {
    return eventFileName(this.nextIndex);
  }

  /** The file being written, if one is open. */
  get currentFile(): string | undefined {
    return this.file?.name;
  }

  /** Appends `chunks`, to a new file if none is open. */
  async write(chunks: Buffer[]): Promise<void> {
    if (!this.file) chunks = [await this.openNewFile(), ...chunks];
    if (chunks.length === 0) return;
    const file = this.file!;
    let total = 0;
    for (const c of chunks) total += c.length;
    file.dirty = true;
    let { bytesWritten } = await file.handle.writev(chunks);
    this.options.counters.bytesWritten += bytesWritten;
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
      this.options.counters.bytesWritten += bytesWritten;
    }
  }

  /** Creates the next file of this attempt; returns its header, to be written first. */
  private async openNewFile(): Promise<Buffer> {
    if (!this.dirReady) {
      const created = await mkdir(this.options.directory, { recursive: true });
      if (created !== undefined && this.options.durability === 'fsync') {
        for (let d = this.options.directory; ; d = dirname(d)) {
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
        const handle = await this.options.openExclusive(join(this.options.directory, name));
        const index = this.nextIndex++;
        this.file = { handle, name, dirty: false, newEntry: true };
        this.options.counters.filesCreated++;
        const header = encodeFileHeader({
          job_id: this.options.jobId,
          epoch: this.options.epoch,
          jobmaster_id: this.options.jobMasterId ?? '',
          created_at_ms: this.options.clock.now(),
          file_index: index,
          payload_version: PAYLOAD_VERSION,
          ...(this.pendingSeal ? { seals_earlier_files: true, sealed_files: this.pendingSeal } : {}),
        });
        this.pendingSeal = undefined;
        this.options.logger.debug({ event: 'job-event-store.file', file: name }, 'job event file created');
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

  /** Makes what was written durable (with durability fsync) and checks the file still has a name. */
  async sync(): Promise<void> {
    const file = this.file;
    if (!file || !file.dirty) return;
    if (this.options.durability === 'fsync') {
      await file.handle.datasync();
      this.options.counters.fsyncs++;
      if (file.newEntry) {
        await fsyncDir(this.options.directory);
        file.newEntry = false;
      }
    }
    file.dirty = false;
    // Writes to a deleted file succeed on POSIX and vanish: check that ours still has a name.
    if ((await file.handle.stat()).nlink === 0) {
      throw new JobEventStoreFailedError(
        `job event file ${join(this.options.directory, file.name)} was deleted while being written`,
      );
    }
  }

  async closeQuietly(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    if (file) await file.handle.close().catch(() => {});
  }
}
