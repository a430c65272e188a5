import { mkdir, open, readdir, rm, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  packSubpartitionBytes,
  AlreadyExistsError,
  IllegalStateError,
  PartitionNotFoundError,
  errorMessage,
  silentLogger,
  type Configuration,
  type Logger,
  type PartitionWithMetrics__Output,
} from '@rebound/core';
import { LocalFileSink, type FinishedPartition } from './block-sink.js';
import {
  DATA_FILE,
  jobPartitionsDir,
  keyOf,
  normalizePartitionId,
  partitionDir,
  partitionsRoot,
  type PartitionIdLike,
} from './format.js';
import { readSubpartitionBlocks, type SubpartitionReadOptions } from './reader.js';
import { retainFinishedPartitions } from './retained-partitions.js';
import { ResultPartitionWriter } from './writer.js';

export const DEFAULT_BLOCK_SIZE = 32 * 1024;
export const DEFAULT_MAX_QUEUED_BLOCKS = 4;

export interface PartitionStoreOptions {
  /** The TaskManager's data directory; partitions live in `<dataDir>/partitions`. */
  dataDir: string;
  /** Payload bytes per block: `taskmanager.network.block-size`. */
  blockSize?: number;
  /** Blocks a writer may queue for the disk before `flushIfNeeded()` waits. */
  maxQueuedBlocks?: number;
  logger?: Logger;
  clock?: () => number;
  /**
   * A shuffle worker's store: opening keeps the finished partitions an earlier process left (each
   * checked against its index) instead of wiping them, and finishing a partition also makes its
   * directory entries durable. Default false: a TaskManager's store.
   */
  retainOnOpen?: boolean;
}

/** Read-side counters (monitoring, and tests that check reads are paced by the consumer). */
export interface PartitionStoreMetrics {
  blocksRead: number;
  bytesRead: number;
  corruptBlocks: number;
}

/** Counts of what the store holds (a shuffle worker reports them with its heartbeats). */
export interface PartitionStoreStats {
  partitions: number;
  /** Bytes of the finished partitions' data files. */
  dataBytes: number;
}

/**
 * The blocking result partitions of one TaskManager process (or of one shuffle worker), on
 * local disk.
 *
 * A TaskManager's store wipes `<dataDir>/partitions` when it opens: a restarted TaskManager
 * process is a new TaskManager with a new id, and the JobMaster knows partitions only by the id
 * of the TaskManager that produced them, so nothing left by an earlier process could ever be
 * asked for again. (Finished partitions do survive a JobMaster failover: that is this process
 * living on.) A shuffle worker's store (`retainOnOpen`) keeps them: the leader knows them by the
 * worker's stable id.
 */
export class PartitionStore {
  readonly dataDir: string;
  readonly blockSize: number;
  readonly metrics: PartitionStoreMetrics = { blocksRead: 0, bytesRead: 0, corruptBlocks: 0 };
  private readonly maxQueuedBlocks: number;
  private readonly logger: Logger;
  private readonly clock: () => number;
  private readonly finished = new Map<string, FinishedPartition>();
  private readonly writers = new Map<string, ResultPartitionWriter>();
  private readonly deletions = new Map<string, Promise<void>>();
  private closed = false;
  private readonly retainOnOpen: boolean;

  private constructor(options: PartitionStoreOptions) {
    this.dataDir = options.dataDir;
    this.blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE;
    this.maxQueuedBlocks = options.maxQueuedBlocks ?? DEFAULT_MAX_QUEUED_BLOCKS;
    this.logger = (options.logger ?? silentLogger()).child({ component: 'PartitionStore' });
    this.clock = options.clock ?? Date.now;
    this.retainOnOpen = options.retainOnOpen ?? false;
    if (!Number.isInteger(this.blockSize) || this.blockSize < 64) {
      throw new IllegalStateError(
        `partition block size must be an integer of at least 64 bytes, got ${this.blockSize}`,
      );
    }
    if (!Number.isInteger(this.maxQueuedBlocks) || this.maxQueuedBlocks < 1) {
      throw new IllegalStateError(`maxQueuedBlocks must be a positive integer, got ${this.maxQueuedBlocks}`);
    }
  }

  /** Store options taken from the TaskManager configuration. */
  static optionsFromConfig(config: Configuration): Pick<PartitionStoreOptions, 'blockSize'> {
    return { blockSize: config.getBytes('taskmanager.network.block-size') };
  }

  /**
   * Creates the store. A TaskManager's wipes whatever an earlier process left behind; a shuffle
   * worker's (`retainOnOpen`) loads the finished partitions and deletes the rest.
   */
  static async open(options: PartitionStoreOptions): Promise<PartitionStore> {
    const store = new PartitionStore(options);
    const root = partitionsRoot(store.dataDir);
    if (store.retainOnOpen) {
      await mkdir(root, { recursive: true });
      await retainFinishedPartitions(root, store.dataDir, store.finished, store.logger);
      return store;
    }
    const leftovers = await readdir(root).catch(() => [] as string[]);
    if (leftovers.length > 0) {
      store.logger.info({ dir: root, jobs: leftovers.length }, 'deleting partitions of an earlier TaskManager process');
    }
    await rm(root, { recursive: true, force: true });
    await mkdir(root, { recursive: true });
    return store;
  }

  /**
   * Starts writing a partition. Its directory holds no index until `finish()`, so a partition
   * that is never finished is never listed nor served.
   */
  async createWriter(id: PartitionIdLike, numSubpartitions: number): Promise<ResultPartitionWriter> {
    this.checkOpen();
    const nid = normalizePartitionId(id);
    const key = keyOf(nid);
    if (!Number.isInteger(numSubpartitions) || numSubpartitions < 1) {
      throw new IllegalStateError(`partition ${key} needs at least one subpartition, got ${numSubpartitions}`);
    }
    if (this.finished.has(key) || this.writers.has(key)) {
      throw new AlreadyExistsError(
        `partition ${key} already exists${this.finished.has(key) ? '' : ' (it is being written)'}; every attempt writes its own partition`,
      );
    }
    const dir = partitionDir(this.dataDir, nid);
    await this.deletions.get(key);
    // A concurrent releaseJob may remove the (empty) job directory under us: try again then.
    let fh;
    for (let attempt = 1; ; attempt++) {
      try {
        await mkdir(dir, { recursive: true });
        fh = await open(join(dir, DATA_FILE), 'w');
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 3) throw err;
      }
    }
    if (this.finished.has(key) || this.writers.has(key) || this.closed) {
      await fh.close();
      throw new IllegalStateError(`partition ${key} was created concurrently or the store closed`);
    }
    const writer: ResultPartitionWriter = new ResultPartitionWriter(
      nid,
      numSubpartitions,
      new LocalFileSink(dir, fh, this.retainOnOpen),
      {
        onFinished: (w, partition) => {
          this.writers.delete(w.key);
          this.finished.set(partition.key, partition);
          this.logger.debug(
            { partition: partition.key, bytes: partition.totalBytes, records: partition.totalRecords },
            'result partition finished',
          );
        },
        onClosed: (w) => {
          if (this.writers.get(w.key) === w) this.writers.delete(w.key);
          this.deleteDir(w.key, dir);
        },
      },
      { blockSize: this.blockSize, maxQueuedBlocks: this.maxQueuedBlocks, clock: this.clock },
      key,
    );
    this.writers.set(key, writer);
    return writer;
  }

  /** Whether close() was called: the store takes no more writers. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether a finished partition with this id is here. */
  has(id: PartitionIdLike): boolean {
    return this.finished.has(keyOf(id));
  }

  get(id: PartitionIdLike): FinishedPartition | undefined {
    return this.finished.get(keyOf(id));
  }

  /** Finished partitions (of one job, or all), in the shape GetAndRetainPartitionsWithMetrics reports. */
  listFinished(jobId?: string): PartitionWithMetrics__Output[] {
    const out: PartitionWithMetrics__Output[] = [];
    for (const p of this.finished.values()) {
      if (jobId !== undefined && p.id.job_id !== jobId) continue;
      out.push({
        partition_id: { ...p.id },
        num_subpartitions: p.numSubpartitions,
        total_bytes: p.subpartitionBytes.reduce((a, b) => a + b, 0),
        packed_subpartition_bytes: packSubpartitionBytes(p.subpartitionBytes),
      });
    }
    return out;
  }

  /** How many finished partitions are here, and their bytes on disk. */
  stats(): PartitionStoreStats {
    let dataBytes = 0;
    for (const p of this.finished.values()) dataBytes += p.dataBytes;
    return { partitions: this.finished.size, dataBytes };
  }

  /** Job ids that have finished partitions here. */
  jobsWithPartitions(): string[] {
    return [...new Set([...this.finished.values()].map((p) => p.id.job_id))];
  }

  /**
   * Releases partitions: finished ones are forgotten and deleted, ones still being written are
   * aborted. Unknown ids are ignored (release is idempotent). Returns how many were released.
   */
  async release(ids: readonly PartitionIdLike[]): Promise<number> {
    let released = 0;
    const keys = ids.map((id) => keyOf(id));
    const aborts: Array<Promise<void>> = [];
    for (const key of keys) {
      const p = this.finished.get(key);
      if (p) {
        this.finished.delete(key);
        this.deleteDir(key, p.dir);
        released++;
      }
      const w = this.writers.get(key);
      if (w) {
        aborts.push(w.abort());
        released++;
      }
    }
    await Promise.all(aborts);
    await Promise.all(keys.map((key) => this.deletions.get(key)));
    return released;
  }

  /** Releases every partition of a job (finished and in progress). */
  async releaseJob(jobId: string): Promise<number> {
    const ids = [
      ...[...this.finished.values()].filter((p) => p.id.job_id === jobId).map((p) => p.id),
      ...[...this.writers.values()].filter((w) => w.id.job_id === jobId).map((w) => w.id),
    ];
    const released = await this.release(ids);
    try {
      // Only an empty directory goes: a writer of the job may have started meanwhile.
      await rmdir(jobPartitionsDir(this.dataDir, jobId));
    } catch {
      // not empty, already gone, or an id that never named a directory
    }
    return released;
  }

  /** Releases everything (a TaskManager shutting down cleanly frees its disk). */
  async releaseAll(): Promise<number> {
    let released = 0;
    for (const job of new Set([...this.jobsWithPartitions(), ...[...this.writers.values()].map((w) => w.id.job_id)])) {
      released += await this.releaseJob(job);
    }
    return released;
  }

  /**
   * The block payloads of subpartitions `start`..`end` (inclusive) of a finished partition: all
   * blocks of `start`, then of `start + 1`, and so on. Throws PartitionNotFoundError at once if
   * the partition is not here (never finished, released, or corrupt).
   */
  openSubpartitionReader(
    id: PartitionIdLike,
    start: number,
    end: number,
    options?: SubpartitionReadOptions,
  ): AsyncGenerator<Buffer, void, undefined> {
    const key = keyOf(id);
    const p = this.finished.get(key);
    if (!p)
      throw new PartitionNotFoundError(
        key,
        this.writers.has(key)
          ? 'it is still being written'
          : `not on this ${this.retainOnOpen ? 'shuffle worker' : 'TaskManager'}`,
      );
    if (!Number.isInteger(start) || !Number.isInteger(end) || start < 0 || end < start || end >= p.numSubpartitions) {
      throw new IllegalStateError(
        `subpartition range [${start}, ${end}] is not within the ${p.numSubpartitions} subpartitions of ${key}`,
      );
    }
    return readSubpartitionBlocks(
      p,
      start,
      end,
      {
        onBlockRead: (bytes) => {
          this.metrics.blocksRead++;
          this.metrics.bytesRead += bytes;
        },
        onCorrupt: (partition, err) => {
          this.metrics.corruptBlocks++;
          // Never report it again: the JobMaster must rerun its producer.
          if (this.finished.get(partition.key) === partition) {
            this.logger.warn({ partition: partition.key, err: err.message }, 'corrupt result partition dropped');
            this.finished.delete(partition.key);
            this.deleteDir(partition.key, partition.dir);
          }
        },
      },
      options,
    );
  }

  /** Aborts writers in progress and waits for pending deletions. Finished partitions stay on disk. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.writers.values()].map((w) => w.abort()));
    await Promise.all([...this.deletions.values()]);
  }

  private checkOpen(): void {
    if (this.closed) throw new IllegalStateError('the partition store is closed');
  }

  private deleteDir(key: string, dir: string): void {
    const previous = this.deletions.get(key) ?? Promise.resolve();
    const deletion = previous
      .then(() => rm(dir, { recursive: true, force: true }))
      .catch((err: unknown) => this.logger.error({ dir, err: errorMessage(err) }, 'cannot delete a result partition'))
      .finally(() => {
        if (this.deletions.get(key) === deletion) this.deletions.delete(key);
      });
    this.deletions.set(key, deletion);
  }
}
