import { status as GrpcStatus } from '@grpc/grpc-js';
import {
  ErrorCode,
  PartitionNotFoundError,
  TaskCanceledError,
  errorMessage,
  partitionKey,
  silentLogger,
  type Configuration,
  type InputGateDeploymentDescriptor__Output,
  type Logger,
  type PartitionLocation__Output,
  type ReboundError,
  type ResultPartitionId__Output,
  type ShuffleWorkerLocation__Output,
  type TaskDeploymentDescriptor__Output,
} from '@rebound/core';
import {
  createRemotePartitionWriter,
  readLocalSubpartitions,
  readRemoteSubpartitions,
  type PartitionClientPool,
  type PartitionStore,
  type ResultPartitionWriter,
  type ShuffleWorkerClientPool,
  type WrittenPartition,
} from '@rebound/partition';

/** A consumer could not read a producer's partition: the JobMaster reruns the producer. */
export class InputPartitionNotFoundError extends PartitionNotFoundError {
  constructor(
    readonly partition: ResultPartitionId__Output,
    detail: string,
  ) {
    super(partitionKey(partition), detail);
  }
}

/** A task's result partition writer, local or remote: what the task reports comes from either. */
export type TaskPartitionWriter = ResultPartitionWriter<WrittenPartition>;

export interface ShuffleEnvironmentOptions {
  taskManagerId: string;
  /** This TaskManager's partitions (shuffle.type taskmanager). */
  store: PartitionStore;
  /** PartitionService clients: of other TaskManagers, and of shuffle workers. */
  partitionClients: PartitionClientPool;
  /** ShuffleWorkerService clients, for producers that write to shuffle workers. */
  shuffleWorkerClients: ShuffleWorkerClientPool;
  logger?: Logger;
}

/** Counters of the shuffle environment (monitoring, and tests that check which path was taken). */
export interface ShuffleEnvironmentMetrics {
  localWriters: number;
  remoteWriters: number;
  /** Reads that moved to the next shuffle worker after one failed. */
  workerFallbacks: number;
}

export interface InputGateReadOptions {
  /** The job's configuration (rpc.partition-request.timeout). */
  config: Configuration;
  signal: AbortSignal;
  /** The job's partition read capability, presented to every producer and shuffle worker. */
  readCapability: string;
}

function checkCanceled(signal: AbortSignal): void {
  if (signal.aborted) throw new TaskCanceledError(String(signal.reason ?? 'task canceled'));
}

const isLost = (err: unknown): boolean => {
  const code = (err as ReboundError | undefined)?.code;
  return code === ErrorCode.PARTITION_NOT_FOUND || code === ErrorCode.UNAVAILABLE;
};

/**
 * A read the worker ended with CANCELLED (its server shut down under the stream): the worker is
 * going away, and its copy with it, just as when it crashes (UNAVAILABLE). Our own cancels are
 * told apart before (the task's signal).
 */
const cancelledByWorker = (err: unknown): boolean =>
  (err as ReboundError | undefined)?.code === ErrorCode.INTERNAL &&
  ((err as Error).cause as { code?: unknown } | undefined)?.code === GrpcStatus.CANCELLED;

/**
 * Flink's ShuffleEnvironment: where a task's result partition goes and where its inputs come
 * from. The deployment decides: a ResultPartitionDeploymentDescriptor that names shuffle workers
 * gets a remote writer to all of them (the TaskManager keeps nothing), one that names none a
 * writer to this TaskManager's store; a PartitionLocation that names shuffle workers is read
 * from them, in order, otherwise from the producer's TaskManager.
 */
export class ShuffleEnvironment {
  readonly metrics: ShuffleEnvironmentMetrics = { localWriters: 0, remoteWriters: 0, workerFallbacks: 0 };
  private readonly logger: Logger;

  constructor(private readonly options: ShuffleEnvironmentOptions) {
    this.logger = (options.logger ?? silentLogger()).child({ component: 'ShuffleEnvironment' });
  }

  /** The task's result partition writer, or undefined for a task without output (a sink). */
  async createResultPartitionWriter(
    tdd: TaskDeploymentDescriptor__Output,
    config: Configuration,
  ): Promise<TaskPartitionWriter | undefined> {
    const output = tdd.output;
    if (!output) return undefined;
    const exec = tdd.execution!;
    // The deploying leader's epoch makes the id unique even where attempt numbers repeat across
    // leaders (a restart from scratch, or a lost log tail, numbers attempts again).
    const id = {
      job_id: exec.job_id,
      vertex_id: exec.vertex_id,
      subtask: exec.subtask,
      attempt: exec.attempt,
      epoch: tdd.epoch,
    };
    if (output.shuffle_workers.length === 0) {
      this.metrics.localWriters++;
      return this.options.store.createWriter(id, output.num_subpartitions);
    }
    this.metrics.remoteWriters++;
    return createRemotePartitionWriter(id, output.num_subpartitions, output.shuffle_workers, {
      clients: this.options.shuffleWorkerClients,
      readCapability: tdd.partition_read_capability,
      timeoutMs: config.getDurationMs('shuffle.remote.write-timeout'),
      blockSize: this.options.store.blockSize,
      logger: this.logger,
    });
  }

  /** Streams one input gate: every producer partition's subpartition range, in order. */
  async *readInputGate(
    gate: InputGateDeploymentDescriptor__Output,
    options: InputGateReadOptions,
  ): AsyncGenerator<unknown[], void, undefined> {
    const timeoutMs = options.config.getDurationMs('rpc.partition-request.timeout');
    for (const p of gate.partitions) {
      const id = p.partition_id!;
      if (p.shuffle_workers.length > 0) {
        yield* this.readFromShuffleWorkers(id, p.shuffle_workers, gate, timeoutMs, options);
      } else {
        yield* this.readFromTaskManager(id, p, gate, timeoutMs, options);
      }
    }
  }

  private async *readFromTaskManager(
    id: ResultPartitionId__Output,
    p: PartitionLocation__Output,
    gate: InputGateDeploymentDescriptor__Output,
    timeoutMs: number,
    options: InputGateReadOptions,
  ): AsyncGenerator<unknown[], void, undefined> {
    if (!p.location) throw new InputPartitionNotFoundError(id, 'no location');
    const local = p.location.task_manager_id === this.options.taskManagerId;
    try {
      const batches = local
        ? readLocalSubpartitions(this.options.store, id, gate.subpartition_start, gate.subpartition_end, {
            signal: options.signal,
          })
        : readRemoteSubpartitions(
            this.options.partitionClients.get(p.location.address),
            id,
            gate.subpartition_start,
            gate.subpartition_end,
            { timeoutMs, signal: options.signal, readCapability: options.readCapability },
          );
      for await (const batch of batches) yield batch;
    } catch (err) {
      checkCanceled(options.signal);
      // A producer's TaskManager that cannot be reached has lost the partition as far as we can tell.
      if (isLost(err)) {
        throw new InputPartitionNotFoundError(id, `${local ? 'local' : p.location.address}: ${errorMessage(err)}`);
      }
      throw err;
    }
  }

  /**
   * Reads from the first worker; when it is unreachable or does not have the partition (also
   * mid-stream), from the next. Replicas hold byte-identical blocks in the same order and every
   * batch is one block, so the next worker skips the blocks already consumed: no record twice,
   * none lost. Only when every worker failed is the partition lost (the JobMaster reruns the
   * producer).
   */
  private async *readFromShuffleWorkers(
    id: ResultPartitionId__Output,
    workers: readonly ShuffleWorkerLocation__Output[],
    gate: InputGateDeploymentDescriptor__Output,
    timeoutMs: number,
    options: InputGateReadOptions,
  ): AsyncGenerator<unknown[], void, undefined> {
    let consumed = 0;
    const failures: string[] = [];
    for (const [i, worker] of workers.entries()) {
      try {
        const batches = readRemoteSubpartitions(
          this.options.partitionClients.get(worker.address),
          id,
          gate.subpartition_start,
          gate.subpartition_end,
          { timeoutMs, signal: options.signal, readCapability: options.readCapability, skipBlocks: consumed },
        );
        for await (const batch of batches) {
          consumed++;
          yield batch;
        }
        return;
      } catch (err) {
        checkCanceled(options.signal);
        if (!isLost(err) && !cancelledByWorker(err)) throw err;
        failures.push(`shuffle worker ${worker.worker_id} (${worker.address}): ${errorMessage(err)}`);
        if (i + 1 < workers.length) {
          this.metrics.workerFallbacks++;
          this.logger.info(
            {
              partition: partitionKey(id),
              worker: worker.worker_id,
              next: workers[i + 1]!.worker_id,
              blocksConsumed: consumed,
              err: errorMessage(err),
            },
            'reading a partition from the next shuffle worker',
          );
        }
      }
    }
    throw new InputPartitionNotFoundError(id, failures.join('; '));
  }
}
