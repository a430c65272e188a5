import type * as grpc from '@grpc/grpc-js';
import {
  ErrorCode,
  IllegalStateError,
  InternalError,
  ReboundError,
  TaskCanceledError,
  UnavailableError,
  fromServiceError,
  silentLogger,
  withContext,
  type Logger,
  type PartitionWriteAck__Output,
  type PartitionWriteMessage,
  type ShuffleWorkerLocation__Output,
  type ShuffleWorkerServiceClient,
} from '@rebound/core';
import type { BlockSink, WrittenPartition } from './block-sink.js';
import { keyOf, normalizePartitionId, type PartitionIdLike, type PartitionIndexFile } from './format.js';
import { DEFAULT_BLOCK_SIZE, DEFAULT_MAX_QUEUED_BLOCKS } from './store.js';
import { ResultPartitionWriter } from './writer.js';

export const DEFAULT_MESSAGE_BYTES = 256 * 1024;
export const DEFAULT_MAX_UNSENT_BYTES = 512 * 1024;

export type ShuffleWorkerTarget = Pick<ShuffleWorkerLocation__Output, 'worker_id' | 'address'>;

/**
 * A producer could not reach shuffle workers it was told to write to (refused, gone, or
 * stalled past shuffle.remote.write-timeout). The TaskManager names them in its failure report,
 * so that the leader stops placing partitions there before their heartbeats time out (Celeborn's
 * excluded workers).
 */
export class ShuffleWorkerUnreachableError extends UnavailableError {
  constructor(
    readonly workerIds: readonly string[],
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** The shuffle workers an error (or an error it wraps, as the partition writer does) could not reach. */
export function unreachableShuffleWorkers(err: unknown): readonly string[] {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ShuffleWorkerUnreachableError) return e.workerIds;
  }
  return [];
}

export interface RemotePartitionWriterOptions {
  /** ShuffleWorkerService clients by worker address (a ShuffleWorkerClientPool). */
  clients: { get(address: string): ShuffleWorkerServiceClient };
  /** The job's partition read capability (`tdd.partition_read_capability`): workers require it on reads. */
  readCapability: string;
  /**
   * `shuffle.remote.write-timeout`: the longest wait for a worker to take more data, or to
   * acknowledge the partition once it is committed. Time the producer spends computing does not
   * count (a dead worker is found by gRPC keepalive then), so a partition of any size is fine.
   */
  timeoutMs: number;
  /** Payload bytes per block (`taskmanager.network.block-size`). */
  blockSize?: number;
  maxQueuedBlocks?: number;
  /** Target size of one `blocks` message; a larger block travels alone. */
  messageBytes?: number;
  /** Bytes a worker's call may hold that gRPC has not sent yet before the writer waits for it. */
  maxUnsentBytes?: number;
  logger?: Logger;
  clock?: () => number;
}

/** One worker's acknowledgement: it holds the partition, durably. */
export interface ShuffleWorkerAck {
  worker_id: string;
  address: string;
  total_bytes: number;
}

/** A partition every one of its shuffle workers acknowledged. */
export interface RemotePartition extends WrittenPartition {
  workers: ShuffleWorkerAck[];
}

/**
 * A writer whose partition goes to shuffle workers instead of this TaskManager's disk: the first
 * worker is the primary, the others replicas, and every one receives the same blocks. `finish()`
 * resolves once every worker has acknowledged the partition (it is on their disks, fsynced):
 * only then may the producer report FINISHED. Nothing is registered in the local store.
 */
export function createRemotePartitionWriter(
  id: PartitionIdLike,
  numSubpartitions: number,
  workers: readonly ShuffleWorkerTarget[],
  options: RemotePartitionWriterOptions,
): ResultPartitionWriter<RemotePartition> {
  const nid = normalizePartitionId(id);
  const key = keyOf(nid);
  if (!Number.isInteger(numSubpartitions) || numSubpartitions < 1) {
    throw new IllegalStateError(`partition ${key} needs at least one subpartition, got ${numSubpartitions}`);
  }
  if (workers.length === 0) throw new IllegalStateError(`partition ${key} has no shuffle worker to write to`);
  const blockSize = options.blockSize ?? DEFAULT_BLOCK_SIZE;
  const logger = (options.logger ?? silentLogger()).child({ component: 'RemotePartitionWriter' });
  const sink = new RemoteBlockSink(key, workers, options, logger);
  sink.open(nid, numSubpartitions);
  return new ResultPartitionWriter<RemotePartition>(
    nid,
    numSubpartitions,
    sink,
    { onFinished: () => {}, onClosed: () => {} },
    {
      blockSize,
      maxQueuedBlocks: options.maxQueuedBlocks ?? DEFAULT_MAX_QUEUED_BLOCKS,
      clock: options.clock ?? Date.now,
    },
    key,
  );
}

/** One WritePartition call. */
class WorkerStream {
  call: grpc.ClientWritableStream<PartitionWriteMessage> | undefined;
  /** Bytes written to the call that gRPC has not handed to HTTP/2 yet. */
  unsent = 0;
  waitingForDrain = false;
  ended = false;
  ack: PartitionWriteAck__Output | undefined;

  constructor(readonly worker: ShuffleWorkerTarget) {}

  get name(): string {
    return `shuffle worker ${this.worker.worker_id} (${this.worker.address})`;
  }
}

/**
 * Streams sealed blocks to every worker: one client-streaming WritePartition call each, `open`
 * first, then the blocks in `blocks` messages of about messageBytes, then `commit` with the
 * index. An append resolves once every call has sent all but maxUnsentBytes of what it was
 * given (write callbacks, and 'drain' when write() said no): so the writer's queue, and with it
 * the producer, waits for the slowest worker instead of piling data up in gRPC.
 */
class RemoteBlockSink implements BlockSink<RemotePartition> {
  private readonly streams: WorkerStream[];
  private readonly messageBytes: number;
  private readonly maxUnsent: number;
  private failed: ReboundError | undefined;
  private aborted = false;
  private committed = false;
  private sent = 0;
  private wake: (() => void) | undefined;

  constructor(
    private readonly key: string,
    workers: readonly ShuffleWorkerTarget[],
    private readonly options: RemotePartitionWriterOptions,
    private readonly logger: Logger,
  ) {
    this.streams = workers.map((w) => new WorkerStream(w));
    this.messageBytes = options.messageBytes ?? DEFAULT_MESSAGE_BYTES;
    this.maxUnsent = options.maxUnsentBytes ?? DEFAULT_MAX_UNSENT_BYTES;
  }

  get failure(): unknown {
    return this.failed;
  }

  open(id: ReturnType<typeof normalizePartitionId>, numSubpartitions: number): void {
    for (const s of this.streams) {
      const call = this.options.clients
        .get(s.worker.address)
        .WritePartition((err: grpc.ServiceError | null, ack?: PartitionWriteAck__Output) => this.onEnd(s, err, ack));
      s.call = call;
      // Failures arrive through the callback; a stream error must not be unhandled.
      call.on('error', () => {});
      this.write(
        s,
        {
          open: { partition_id: id, num_subpartitions: numSubpartitions, read_capability: this.options.readCapability },
        },
        0,
      );
    }
  }

  async append(blocks: readonly Buffer[], position: number): Promise<void> {
    if (this.failed) throw this.failed;
    if (position !== this.sent) {
      throw new IllegalStateError(`partition ${this.key}: blocks at byte ${position}, but ${this.sent} were sent`);
    }
    for (let i = 0; i < blocks.length;) {
      let bytes = blocks[i]!.length;
      let j = i + 1;
      while (j < blocks.length && bytes + blocks[j]!.length <= this.messageBytes) bytes += blocks[j++]!.length;
      // A copy: the writer reuses its block buffers once this resolves, while gRPC may still
      // hold the message.
      const data = Buffer.concat(blocks.slice(i, j), bytes);
      for (const s of this.streams) this.write(s, { blocks: data }, bytes);
      this.sent += bytes;
      i = j;
      await this.waitUntil(
        (s) => s.unsent <= this.maxUnsent && !s.waitingForDrain,
        `took no data of partition ${this.key} for ${this.options.timeoutMs} ms`,
      );
    }
  }

  async complete(index: PartitionIndexFile, partition: WrittenPartition): Promise<RemotePartition> {
    if (this.failed) throw this.failed;
    if (index.dataBytes !== this.sent) {
      throw new IllegalStateError(
        `partition ${this.key}: an index of ${index.dataBytes} bytes after ${this.sent} were sent`,
      );
    }
    this.committed = true;
    const commit: PartitionWriteMessage = { commit: { index_json: JSON.stringify(index) } };
    for (const s of this.streams) {
      this.write(s, commit, 0);
      s.call!.end();
    }
    await this.waitUntil(
      (s) => s.ack !== undefined,
      `did not acknowledge partition ${this.key} within ${this.options.timeoutMs} ms of its commit`,
    );
    const acks = this.streams.map((s): ShuffleWorkerAck => {
      const total = Number(s.ack!.total_bytes);
      if (total !== index.dataBytes) {
        throw this.fail(
          new InternalError(
            `${s.name} acknowledged ${total} bytes of partition ${this.key}, but ${index.dataBytes} were sent`,
          ),
        );
      }
      return { worker_id: s.ack!.worker_id || s.worker.worker_id, address: s.worker.address, total_bytes: total };
    });
    this.logger.debug(
      { partition: this.key, bytes: index.dataBytes, workers: acks.map((a) => a.worker_id) },
      'remote partition acknowledged',
    );
    return { ...partition, workers: acks };
  }

  async abort(): Promise<void> {
    if (this.aborted) return;
    this.aborted = true;
    this.failed ??= new TaskCanceledError(`writing partition ${this.key} was aborted`);
    for (const s of this.streams) if (!s.ended) s.call?.cancel();
    this.wake?.();
  }

  private write(s: WorkerStream, message: PartitionWriteMessage, bytes: number): void {
    const call = s.call!;
    s.unsent += bytes;
    const accepted = call.write(message, () => {
      s.unsent -= bytes;
      this.wake?.();
    });
    if (!accepted && !s.waitingForDrain) {
      s.waitingForDrain = true;
      call.once('drain', () => {
        s.waitingForDrain = false;
        this.wake?.();
      });
    }
  }

  private onEnd(s: WorkerStream, err: grpc.ServiceError | null, ack: PartitionWriteAck__Output | undefined): void {
    s.ended = true;
    if (err) {
      // Our own cancel (abort, or another worker's failure) ends the other calls too.
      if (!this.aborted && !this.failed) {
        const cause = fromServiceError(err);
        const message = `${s.name}: ${cause.message}`;
        // A worker that refused the data for a reason of its own is reachable; one that did not answer is not.
        this.fail(
          cause.code === ErrorCode.UNAVAILABLE
            ? new ShuffleWorkerUnreachableError([s.worker.worker_id], message, { cause })
            : withContext(cause, message),
        );
      }
    } else if (!this.committed) {
      this.fail(new InternalError(`${s.name} answered before partition ${this.key} was committed`));
    } else {
      s.ack = ack;
    }
    this.wake?.();
  }

  /** Records the first failure and cancels every call: the producer fails, and reruns elsewhere. */
  private fail(err: ReboundError): ReboundError {
    if (this.failed) return this.failed;
    this.failed = err;
    this.logger.debug({ partition: this.key, code: err.code, err: err.message }, 'writing a remote partition failed');
    for (const s of this.streams) if (!s.ended) s.call?.cancel();
    this.wake?.();
    return err;
  }

  /**
   * Waits until every call is `ready`. Any progress of any call restarts the timeout; a wait
   * that sees none for timeoutMs fails the partition with UNAVAILABLE.
   */
  private async waitUntil(ready: (s: WorkerStream) => boolean, stalled: string): Promise<void> {
    for (;;) {
      if (this.failed) throw this.failed;
      const waitingFor = this.streams.filter((s) => !ready(s));
      if (waitingFor.length === 0) return;
      const progressed = await new Promise<boolean>((resolve) => {
        const timer = setTimeout(() => {
          this.wake = undefined;
          resolve(false);
        }, this.options.timeoutMs);
        this.wake = () => {
          clearTimeout(timer);
          this.wake = undefined;
          resolve(true);
        };
      });
      if (!progressed && !this.failed) {
        const still = this.streams.filter((s) => !ready(s));
        if (still.length > 0)
          this.fail(
            new ShuffleWorkerUnreachableError(
              still.map((s) => s.worker.worker_id),
              `${still.map((s) => s.name).join(', ')} ${stalled}`,
            ),
          );
      }
    }
  }
}
