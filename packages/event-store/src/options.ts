import { ConfigError, type Configuration } from '@rebound/core';

export type JobEventStoreDurability = 'fsync' | 'flush';

export interface JobEventStoreSettings {
  /** Bytes buffered before a flush (`job-event.store.write-buffer.size`). */
  writeBufferSize: number;
  /** Longest wait of an event in the buffer (`job-event.store.write-buffer.flush-interval`). */
  flushIntervalMs: number;
  /** fsync: each flush is fsynced; flush: handed to the OS only (`job-event.store.durability`). */
  durability: JobEventStoreDurability;
}

export const DEFAULT_JOB_EVENT_STORE_SETTINGS: JobEventStoreSettings = {
  writeBufferSize: 1024 * 1024,
  flushIntervalMs: 1000,
  durability: 'fsync',
};

export function jobEventStoreSettings(config: Configuration): JobEventStoreSettings {
  const writeBufferSize = config.getBytes('job-event.store.write-buffer.size');
  const flushIntervalMs = config.getDurationMs('job-event.store.write-buffer.flush-interval');
  const durability = config.getString('job-event.store.durability');
  if (writeBufferSize < 1) throw new ConfigError('job-event.store.write-buffer.size: must be at least 1 byte');
  if (flushIntervalMs < 1) throw new ConfigError('job-event.store.write-buffer.flush-interval: must be at least 1 ms');
  if (durability !== 'fsync' && durability !== 'flush') {
    throw new ConfigError(`job-event.store.durability: '${durability}' is not one of fsync, flush`);
  }
  return { writeBufferSize, flushIntervalMs, durability };
}
