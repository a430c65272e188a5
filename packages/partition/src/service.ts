import type * as grpc from '@grpc/grpc-js';
import {
  errorMessage,
  ReboundError,
  toServiceError,
  type Logger,
  type PartitionChunk,
  type PartitionServiceHandlers,
  type ReadSubpartitionsRequest__Output,
} from '@rebound/core';
import { keyOf } from './format.js';
import type { PartitionStore } from './store.js';

/** Counters of the partition server (monitoring, and tests of its flow control). */
export interface PartitionServerMetrics {
  streamsStarted: number;
  streamsActive: number;
  blocksSent: number;
  bytesSent: number;
  /** Times a stream stopped reading because the consumer had not taken what was sent. */
  drainWaits: number;
  /** Streams currently waiting for the consumer. */
  streamsWaitingForDrain: number;
}

export function newPartitionServerMetrics(): PartitionServerMetrics {
  return { streamsStarted: 0, streamsActive: 0, blocksSent: 0, bytesSent: 0, drainWaits: 0, streamsWaitingForDrain: 0 };
}

export interface PartitionServiceOptions {
  metrics?: PartitionServerMetrics;
  /** Refuses a read (throws) whose request lacks the job's read capability (ReadCapabilities.check). */
  checkReadCapability?: (jobId: string, capability: string, partition: string) => void;
}

type Call = grpc.ServerWritableStream<ReadSubpartitionsRequest__Output, PartitionChunk>;

/** Resolves when the call can take more data, or when it is over (cancelled or closed). */
function writable(call: Call, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      call.off('drain', done);
      call.off('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    call.on('drain', done);
    call.on('close', done);
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * The PartitionService of a TaskManager (and of a shuffle worker). Each ReadSubpartitions call
 * streams one block per PartitionChunk (consumers rely on it: one that resumes on a replica skips
 * the chunks it took, as blocks), reading the next block only when gRPC has taken the previous ones
 * (`write()` returned true, or 'drain'), so a slow consumer holds the server to a few blocks in
 * memory. A cancelled call stops the disk reads.
 */
export function createPartitionServiceHandlers(
  store: PartitionStore,
  logger: Logger,
  options: PartitionServiceOptions = {},
): PartitionServiceHandlers {
  const log = logger.child({ component: 'PartitionServer' });
  const metrics = options.metrics ?? newPartitionServerMetrics();

  async function serve(call: Call): Promise<void> {
    const req = call.request;
    const id = req.partition_id ?? { job_id: '', vertex_id: '', subtask: 0, attempt: 0, epoch: 0 };
    const key = keyOf(id);
    const ac = new AbortController();
    const onCancel = (): void => ac.abort();
    call.on('cancelled', onCancel);
    metrics.streamsStarted++;
    metrics.streamsActive++;
    let blocks = 0;
    try {
      options.checkReadCapability?.(id.job_id, req.read_capability, key);
      const reader = store.openSubpartitionReader(id, req.subpartition_start, req.subpartition_end, {
        signal: ac.signal,
      });
      for await (const payload of reader) {
        if (ac.signal.aborted) break;
        blocks++;
        metrics.blocksSent++;
        metrics.bytesSent += payload.length;
        if (!call.write({ data: payload })) {
          metrics.drainWaits++;
          metrics.streamsWaitingForDrain++;
          try {
            await writable(call, ac.signal);
          } finally {
            metrics.streamsWaitingForDrain--;
          }
        }
        if (ac.signal.aborted) break;
      }
      if (ac.signal.aborted) {
        log.debug({ partition: key, blocks }, 'partition stream cancelled by the consumer');
      } else {
        call.end();
      }
    } catch (err) {
      const known = err instanceof ReboundError;
      if (known) log.debug({ partition: key, code: err.code, err: err.message }, 'partition stream failed');
      else log.error({ partition: key, err: errorMessage(err) }, 'partition stream failed');
      if (!ac.signal.aborted) call.emit('error', toServiceError(err));
    } finally {
      call.off('cancelled', onCancel);
      metrics.streamsActive--;
    }
  }

  return {
    ReadSubpartitions(call: Call): void {
      void serve(call);
    },
  };
}
