// TEMPORARY WIRING, until wt/shuffle-data is merged: @rebound/partition then has
// `PartitionStore.open({ retainOnOpen: true })` and `createShuffleIngestHandler`, and this file goes.
import * as grpc from '@grpc/grpc-js';
import type { Logger, ShuffleWorkerServiceHandlers } from '@rebound/core';
import { PartitionStore, type PartitionStoreOptions } from '@rebound/partition';

/** Stands for `PartitionStore.open({ ...options, retainOnOpen: true })`; this one still wipes. */
export function openRetainingStore(options: PartitionStoreOptions): Promise<PartitionStore> {
  return PartitionStore.open(options);
}

/** Stands for @rebound/partition's WritePartition handler; this one refuses every write. */
export function createShuffleIngestHandler(
  _store: PartitionStore,
  _opts: { logger: Logger; admitWriter(jobId: string, readCapability: string): Promise<void> },
): ShuffleWorkerServiceHandlers['WritePartition'] {
  return (_call, callback) =>
    callback({ code: grpc.status.UNIMPLEMENTED, details: 'WritePartition is not wired yet (wt/shuffle-data)' });
}
