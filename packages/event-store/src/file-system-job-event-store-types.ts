import type { Clock, Configuration, Logger, ReboundError } from '@rebound/core';
import type { FlushTimer } from './flush-timer.js';
import type { JobEventStoreDurability } from './options.js';

/** The part of a file handle the writer uses; injectable to simulate a full disk. */
export interface EventFileHandle {
  /** The buffers are reused for new events once the returned promise settles. */
  writev(buffers: Buffer[]): Promise<{ bytesWritten: number }>;
  datasync(): Promise<void>;
  stat(): Promise<{ nlink: number }>;
  close(): Promise<void>;
}

/** Creates a new file, failing with EEXIST if it exists (never appends to another writer's file). */
export type OpenExclusive = (path: string) => Promise<EventFileHandle>;

export type JobEventStoreState = 'created' | 'running' | 'failed' | 'fenced' | 'stopped';

export interface JobEventStoreStatus {
  state: JobEventStoreState;
  epoch: number;
  /** Why recording stopped ('failed' or 'fenced'). */
  failure?: ReboundError;
}

export interface JobEventStoreStats {
  /** Events accepted by writeEvent. */
  eventsWritten: number;
  /** Events accepted but never written: pending when the store failed or was fenced, or written after. */
  eventsDropped: number;
  /** Bytes written to files, headers included. */
  bytesWritten: number;
  flushes: number;
  fsyncs: number;
  filesCreated: number;
  /** Bytes waiting for the next flush. */
  pendingBytes: number;
}

export interface FileSystemJobEventStoreOptions {
  haDir: string;
  jobId: string;
  /** Fencing epoch of the JobMaster that owns this store. */
  epoch: number;
  /** The epoch of the current leader; checked before every flush (and before clearing). */
  currentLeaderEpoch: () => Promise<number> | number;
  jobMasterId?: string;
  /** Source of the three settings below when they are not given. */
  config?: Configuration;
  writeBufferSize?: number;
  flushIntervalMs?: number;
  durability?: JobEventStoreDurability;
  clock?: Clock;
  flushTimer?: FlushTimer;
  logger?: Logger;
  /** Called once when recording stops for good: the store failed or was fenced. */
  onDisabled?: (state: 'failed' | 'fenced', error: ReboundError) => void;
  openExclusive?: OpenExclusive;
  readChunkBytes?: number;
}
