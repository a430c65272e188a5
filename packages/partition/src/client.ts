import {
  fromServiceError,
  ReboundError,
  type PartitionChunk__Output,
  type PartitionServiceClient,
  UnavailableError,
  TaskCanceledError,
} from '@rebound/core';
import { decodeRecords } from './codec.js';
import { keyOf, normalizePartitionId, type PartitionIdLike } from './format.js';
import type { PartitionStore } from './store.js';

export interface ReadSubpartitionsOptions {
  /**
   * Longest wait for the next chunk while the consumer is waiting for it (time the consumer
   * spends on a batch does not count). A stream of any length is fine as long as it moves; a
   * producer that stalls this long fails the read with UNAVAILABLE.
   */
  timeoutMs: number;
  /** Cancels the read: the call is cancelled and the iteration ends with TASK_CANCELED. */
  signal?: AbortSignal;
  /** The job's partition read capability (from the consumer's deployment); the producer requires it. */
  readCapability?: string;
  /**
   * Blocks to skip, undecoded, at the start of the stream: those a consumer already took from
   * another copy of the partition (replicas hold the same blocks in the same order).
   */
  skipBlocks?: number;
}

function cancelled(key: string): ReboundError {
  return new TaskCanceledError(`reading partition ${key} was cancelled`);
}

/**
 * Streams subpartitions `start`..`end` (inclusive) of a partition on another TaskManager and
 * yields each block's records. gRPC flow control paces the producer by how fast this iterator
 * is consumed. Failures are ReboundErrors: PARTITION_NOT_FOUND when the producer no longer has
 * the partition (or it is corrupt), UNAVAILABLE when the producer's TaskManager is unreachable.
 */
export async function* readRemoteSubpartitions(
  client: PartitionServiceClient,
  id: PartitionIdLike,
  start: number,
  end: number,
  options: ReadSubpartitionsOptions,
): AsyncGenerator<unknown[], void, undefined> {
  const key = keyOf(id);
  const { signal, timeoutMs } = options;
  if (signal?.aborted) throw cancelled(key);
  const call = client.ReadSubpartitions({
    partition_id: normalizePartitionId(id),
    subpartition_start: start,
    subpartition_end: end,
    read_capability: options.readCapability ?? '',
  });
  let finished = false;
  const onAbort = (): void => call.cancel();
  signal?.addEventListener('abort', onAbort, { once: true });
  const chunks = call[Symbol.asyncIterator]() as AsyncIterator<PartitionChunk__Output>;
  let skip = options.skipBlocks ?? 0;
  try {
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      let timedOut = false;
      const next = chunks.next();
      const result = await Promise.race([
        next,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => {
            timedOut = true;
            // The pending next() rejects with CANCELLED once the call is cancelled: swallow it.
            next.catch(() => {});
            call.cancel();
            reject(new UnavailableError(`no data from the producer of partition ${key} for ${timeoutMs} ms`));
          }, timeoutMs);
        }),
      ]).finally(() => clearTimeout(timer));
      if (timedOut) throw new UnavailableError(`no data from the producer of partition ${key} for ${timeoutMs} ms`);
      if (result.done) {
        finished = true;
        return;
      }
      if (skip > 0) {
        skip--;
        continue;
      }
      yield decodeRecords(result.value.data);
    }
  } catch (err) {
    finished = true;
    if (signal?.aborted) throw cancelled(key);
    throw fromServiceError(err);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    // The consumer stopped early (break, or its own failure): tell the producer to stop reading.
    if (!finished) call.cancel();
  }
}

/**
 * The same stream as readRemoteSubpartitions for a partition produced on this TaskManager:
 * read straight from the store, no gRPC.
 */
export async function* readLocalSubpartitions(
  store: PartitionStore,
  id: PartitionIdLike,
  start: number,
  end: number,
  options: { signal?: AbortSignal } = {},
): AsyncGenerator<unknown[], void, undefined> {
  const key = keyOf(id);
  for await (const payload of store.openSubpartitionReader(id, start, end, { signal: options.signal })) {
    yield decodeRecords(payload);
  }
  if (options.signal?.aborted) throw cancelled(key);
}
