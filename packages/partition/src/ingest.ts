import type * as grpc from '@grpc/grpc-js';
import {
  InvalidArgumentError,
  ReboundError,
  TaskCanceledError,
  UnavailableError,
  errorMessage,
  toServiceError,
  type Logger,
  type PartitionWriteAck,
  type PartitionWriteMessage__Output,
} from '@rebound/core';
import { keyOf, type PartitionIndexFile } from './format.js';
import { indexDifference, parseIndexFile } from './index-file.js';
import type { PartitionStore } from './store.js';
import type { ResultPartitionWriter } from './writer.js';

/** Counters of a shuffle worker's ingest (monitoring, and tests). */
export interface ShuffleIngestMetrics {
  streamsStarted: number;
  streamsActive: number;
  partitionsCommitted: number;
  /** Streams that ended without a partition: refused, malformed, cancelled or failed. */
  streamsFailed: number;
  bytesReceived: number;
}

export function newShuffleIngestMetrics(): ShuffleIngestMetrics {
  return { streamsStarted: 0, streamsActive: 0, partitionsCommitted: 0, streamsFailed: 0, bytesReceived: 0 };
}

export interface ShuffleIngestOptions {
  logger: Logger;
  /** This worker's id, sent back in every PartitionWriteAck. */
  workerId: string;
  /**
   * Called on `open`, before anything is written: the worker remembers the job's read capability,
   * or checks it against the one it has. A rejection ends the call with the rejection's code.
   */
  admitWriter(jobId: string, readCapability: string): Promise<void>;
  metrics?: ShuffleIngestMetrics;
}

type Call = grpc.ServerReadableStream<PartitionWriteMessage__Output, PartitionWriteAck>;

/**
 * ShuffleWorkerService.WritePartition: a producer streams one partition into `store`. The blocks
 * go to the partition's directory as they come (read one message at a time, so a slow disk holds
 * the producer back through gRPC flow control); the directory is unfinished, neither listed nor
 * served, until the index is written. At the end of the stream the committed index must describe
 * exactly the blocks received; the data is fsynced, the index written atomically, the partition
 * registered as finished, and only then is the call answered.
 *
 * A second write of a partition that exists (finished, or being written) is refused with
 * ALREADY_EXISTS, even with the same bytes: every attempt of a producer writes a partition of
 * its own id, so a second stream is a duplicate whose first copy is authoritative.
 *
 * A stream that ends without a commit, a malformed message, an index that disagrees with the
 * data, or a cancelled call deletes what was written; nothing is thrown past the handler.
 */
export function createShuffleIngestHandler(
  store: PartitionStore,
  options: ShuffleIngestOptions,
): grpc.handleClientStreamingCall<PartitionWriteMessage__Output, PartitionWriteAck> {
  const log = options.logger.child({ component: 'ShuffleIngest' });
  const metrics = options.metrics ?? newShuffleIngestMetrics();

  async function ingest(call: Call, named: (key: string) => void): Promise<PartitionWriteAck> {
    let writer: ResultPartitionWriter | undefined;
    let key = 'an unopened partition';
    let index: PartitionIndexFile | undefined;
    const invalid = (detail: string): InvalidArgumentError =>
      new InvalidArgumentError(`writing partition ${key}: ${detail}`);
    try {
      for await (const msg of call as AsyncIterable<PartitionWriteMessage__Output>) {
        if (index) throw invalid('a message after the commit');
        switch (msg.kind) {
          case 'open': {
            if (writer) throw invalid('a second open');
            const open = msg.open;
            if (!open?.partition_id) throw invalid('open names no partition');
            key = keyOf(open.partition_id);
            named(key);
            await options.admitWriter(open.partition_id.job_id, open.read_capability);
            if (call.cancelled) break;
            writer = await store.createWriter(open.partition_id, open.num_subpartitions);
            break;
          }
          case 'blocks': {
            if (!writer) throw invalid('blocks before open');
            const bytes = msg.blocks ?? Buffer.alloc(0);
            writer.appendSealedBlocks(bytes);
            metrics.bytesReceived += bytes.length;
            await writer.flushIfNeeded();
            break;
          }
          case 'commit': {
            if (!writer) throw invalid('a commit before open');
            const received = parseIndexFile(msg.commit?.index_json ?? '', `the committed index of partition ${key}`);
            const difference = indexDifference(received, writer.indexSoFar());
            if (difference !== undefined) {
              throw invalid(`the committed index disagrees with the blocks received: ${difference}`);
            }
            index = received;
            break;
          }
          default:
            throw invalid('a message without open, blocks or commit');
        }
      }
      if (call.cancelled) throw new TaskCanceledError(`the producer cancelled writing partition ${key}`);
      if (!writer) throw invalid('the stream ended before open');
      if (!index) throw invalid('the stream ended without a commit');
      const partition = await writer.finish();
      return { worker_id: options.workerId, total_bytes: partition.dataBytes };
    } catch (err) {
      await writer?.abort().catch(() => {});
      // A cancelled call ends its message stream with a premature close: say what happened.
      if (call.cancelled && !(err instanceof ReboundError)) {
        throw new TaskCanceledError(`the producer cancelled writing partition ${key}`);
      }
      // The worker is shutting down (its store closed under the stream): the producer's answer
      // is the one to a worker that is gone.
      if (store.isClosed) {
        throw new UnavailableError(`the shuffle worker is shutting down; partition ${key} was not kept`, {
          cause: err,
        });
      }
      throw err;
    }
  }

  return (call, callback) => {
    metrics.streamsStarted++;
    metrics.streamsActive++;
    let key = 'an unopened partition';
    ingest(call, (k) => (key = k))
      .then(
        (ack) => {
          metrics.partitionsCommitted++;
          log.debug({ partition: key, bytes: ack.total_bytes }, 'partition received');
          callback(null, ack);
        },
        (err: unknown) => {
          metrics.streamsFailed++;
          if (err instanceof ReboundError) {
            log.info(
              { partition: key, code: err.code, err: err.message },
              'a partition stream ended without a partition',
            );
          } else {
            log.error({ partition: key, err: errorMessage(err) }, 'a partition stream failed');
          }
          callback(toServiceError(err));
        },
      )
      .finally(() => {
        metrics.streamsActive--;
      });
  };
}
