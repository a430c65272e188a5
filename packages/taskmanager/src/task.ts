import { ErrorCode, PartitionNotFoundError, ReboundError, errorMessage, partitionKey, sleep } from '@rebound/core';
import type {
  Configuration,
  IOMetrics,
  InputGateDeploymentDescriptor__Output,
  ResultPartitionId__Output,
  SplitResponse__Output,
  TaskDeploymentDescriptor__Output,
} from '@rebound/core';
import type { ProcessContext, SourceSplit, Transformation } from '@rebound/api';
import { groupingKey } from '@rebound/api';
import { createKeyedAggregator } from './keyed-reducer.js';
import { composeChain, keySelectorOf, lookup, type Emit } from './operator-chain.js';
import { OutputEmitter } from './output-emitter.js';
import { readLocalSubpartitions, readRemoteSubpartitions, type PartitionClientPool, type PartitionStore } from './partition/index.js';
import { SinkWriter } from './sink-writer.js';

export interface TaskEnvironment {
  readonly tdd: TaskDeploymentDescriptor__Output;
  readonly operators: ReadonlyMap<string, Transformation>;
  readonly store: PartitionStore;
  readonly clients: PartitionClientPool;
  readonly taskManagerId: string;
  readonly config: Configuration;
  readonly signal: AbortSignal;
  requestSplit(operatorId: string): Promise<SplitResponse__Output>;
  /** Sends a JSON request to the coordinator of `operatorId`; resolves to its JSON answer. */
  sendCoordinationRequest(operatorId: string, requestJson: string): Promise<string>;
}

/** A consumer could not read a producer's partition: the JobMaster reruns the producer. */
export class InputPartitionNotFoundError extends PartitionNotFoundError {
  constructor(
    readonly partition: ResultPartitionId__Output,
    detail: string,
  ) {
    super(partitionKey(partition), detail);
  }
}

/**
 * User functions run on the TaskManager's only thread. Batches that are already buffered (a
 * remote stream hands over many chunks at once; a generator source yields without I/O) flow
 * through promise resolution alone, which never lets timers or I/O run: a long enough run of
 * CPU-heavy user code starves the heartbeats, and the JobMaster declares the TaskManager lost
 * and reruns its tasks. So a task gives the event loop a turn whenever it has worked this long
 * without one (well below any heartbeat interval; a turn costs microseconds).
 */
const MAX_BUSY_MS = 50;

/** Reduce results pushed on between two backpressure checks. */
const DRAIN_BATCH_SIZE = 1024;

class EventLoopTurns {
  private last = performance.now();

  async maybeYield(): Promise<void> {
    if (performance.now() - this.last < MAX_BUSY_MS) return;
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.last = performance.now();
  }
}

function checkCanceled(signal: AbortSignal): void {
  if (signal.aborted) throw new ReboundError(ErrorCode.TASK_CANCELED, String(signal.reason ?? 'task canceled'));
}

/**
 * Settles like `call`, but rejects at once when the task is canceled. A split request to a
 * JobMaster that hangs (paused, partitioned away) otherwise keeps a canceled task, its slot and
 * its half-written partition alive until rpc.timeout, while the new leader already redeploys it.
 */
function unlessCanceled<T>(call: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new ReboundError(ErrorCode.TASK_CANCELED, String(signal.reason ?? 'task canceled')));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    call.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}

/** Streams one input gate: every producer partition's subpartition range, in order. */
async function* readInput(env: TaskEnvironment, gate: InputGateDeploymentDescriptor__Output): AsyncGenerator<unknown[]> {
  const timeoutMs = env.config.getDurationMs('rpc.partition-request.timeout');
  for (const p of gate.partitions) {
    const id = p.partition_id!;
    if (!p.location) throw new InputPartitionNotFoundError(id, 'no location');
    const local = p.location.task_manager_id === env.taskManagerId;
    try {
      const batches = local
        ? readLocalSubpartitions(env.store, id, gate.subpartition_start, gate.subpartition_end, { signal: env.signal })
        : readRemoteSubpartitions(env.clients.get(p.location.address), id, gate.subpartition_start, gate.subpartition_end, {
            timeoutMs,
            signal: env.signal,
            readCapability: env.tdd.partition_read_capability,
          });
      for await (const batch of batches) yield batch;
    } catch (err) {
      checkCanceled(env.signal);
      const code = (err as ReboundError).code;
      // A producer's TaskManager that cannot be reached has lost the partition as far as we can tell.
      if (code === ErrorCode.PARTITION_NOT_FOUND || code === ErrorCode.UNAVAILABLE) {
        throw new InputPartitionNotFoundError(id, `${local ? 'local' : p.location.address}: ${errorMessage(err)}`);
      }
      throw err;
    }
  }
}

/**
 * Runs one task attempt to its end: the chain head (a source reader, a keyed reduce or a hash
 * join) pushes records through the chained operators into the output partition or the sink.
 */
export async function runTask(env: TaskEnvironment): Promise<IOMetrics> {
  const { tdd, operators, signal } = env;
  const exec = tdd.execution!;
  const headId = tdd.operator_ids[0];
  if (!headId) throw new ReboundError(ErrorCode.JOB_INVALID, 'a task without operators');
  const head = operators.get(headId);
  if (!head) throw new ReboundError(ErrorCode.JOB_INVALID, `operator ${headId} is missing from the job module`);

  let sink: SinkWriter | undefined;
  let output: OutputEmitter | undefined;
  let end: Emit;
  // The deploying leader's epoch makes the id unique even where attempt numbers repeat across
  // leaders (a restart from scratch, or a lost log tail, numbers attempts again).
  const partitionId = { job_id: exec.job_id, vertex_id: exec.vertex_id, subtask: exec.subtask, attempt: exec.attempt, epoch: tdd.epoch };
  const partitionWriter = tdd.output ? await env.store.createWriter(partitionId, tdd.output.num_subpartitions) : undefined;
  try {
    if (tdd.sink) {
      const op = lookup(operators, tdd.sink.operator_id, 'sink');
      sink = new SinkWriter(tdd.sink_temp_file, op.format);
      await sink.open();
      end = sink.emit;
    } else if (partitionWriter && tdd.output) {
      output = new OutputEmitter(partitionWriter, tdd.output, operators, env.config.getInt('taskmanager.network.combiner.max-keys'));
      end = output.emit;
    } else {
      throw new ReboundError(ErrorCode.JOB_INVALID, `vertex ${exec.vertex_id} has neither a sink nor an output`);
    }
    const contextOf = (operatorId: string): ProcessContext<unknown, unknown> => ({
      subtask: exec.subtask,
      parallelism: tdd.parallelism,
      attempt: exec.attempt,
      async sendRequestToCoordinator(request: unknown): Promise<unknown> {
        const json = JSON.stringify(request ?? null);
        if (json === undefined) throw new ReboundError(ErrorCode.USER_CODE, `operator ${operatorId}: a coordination request must be JSON-encodable`);
        return JSON.parse(await unlessCanceled(env.sendCoordinationRequest(operatorId, json), signal)) as unknown;
      },
    });
    const chain = composeChain(operators, tdd.operator_ids.slice(1), end, contextOf);
    await chain.open();
    const turns = new EventLoopTurns();
    const afterBatch = async (): Promise<void> => {
      checkCanceled(signal);
      await chain.flush();
      if (output) await output.afterBatch();
      if (sink) await sink.afterBatch();
      await turns.maybeYield();
    };
    let recordsIn = 0;

    switch (head.kind) {
      case 'source': {
        const reader = head.source.createReader({ subtask: exec.subtask, parallelism: tdd.parallelism, attempt: exec.attempt });
        try {
          for (;;) {
            checkCanceled(signal);
            const res = await unlessCanceled(env.requestSplit(head.id), signal);
            if (res.no_more_splits) break;
            if (!res.split_json) {
              await sleep(Math.max(10, res.retry_after_ms), signal);
              continue;
            }
            const split = JSON.parse(res.split_json) as SourceSplit;
            for await (const batch of reader.read(split)) {
              for (const r of batch) chain.push(r);
              recordsIn += batch.length;
              await afterBatch();
            }
          }
        } finally {
          await reader.close?.();
        }
        break;
      }
      case 'reduce': {
        const keyBy = lookup(operators, head.input, 'keyBy');
        const reducer = createKeyedAggregator(keyBy.keySelector, head);
        for await (const batch of readInput(env, tdd.inputs[0]!)) {
          for (const r of batch) reducer.add(r);
          recordsIn += batch.length;
          checkCanceled(signal);
          await turns.maybeYield();
        }
        for (const batch of reducer.drainBatches(DRAIN_BATCH_SIZE)) {
          for (const r of batch) chain.push(r);
          await afterBatch();
        }
        break;
      }
      case 'join': {
        const leftKey = keySelectorOf(operators, head.left);
        const rightKey = keySelectorOf(operators, head.right);
        const built = new Map<unknown, unknown[]>();
        for await (const batch of readInput(env, tdd.inputs[1]!)) {
          for (const r of batch) {
            const k = groupingKey(rightKey(r));
            const list = built.get(k);
            if (list) list.push(r);
            else built.set(k, [r]);
          }
          recordsIn += batch.length;
          checkCanceled(signal);
          await turns.maybeYield();
        }
        const fn = head.fn;
        for await (const batch of readInput(env, tdd.inputs[0]!)) {
          for (const l of batch) {
            const matches = built.get(groupingKey(leftKey(l)));
            if (matches) for (const r of matches) chain.push(fn(l, r));
          }
          recordsIn += batch.length;
          await afterBatch();
        }
        break;
      }
      default:
        throw new ReboundError(ErrorCode.JOB_INVALID, `operator ${head.id} (${head.kind}) cannot head a task`);
    }

    checkCanceled(signal);
    await chain.close();
    checkCanceled(signal);
    if (output) await output.finish();
    if (sink) await sink.finish();
    const finished = partitionWriter ? await partitionWriter.finish() : undefined;
    return {
      records_in: recordsIn,
      records_out: output?.recordsOut ?? sink?.recordsOut ?? 0,
      bytes_in: 0,
      bytes_out: finished?.totalBytes ?? sink?.bytesOut ?? 0,
      subpartition_bytes: finished?.subpartitionBytes ?? [],
    };
  } catch (err) {
    sink?.abort();
    await partitionWriter?.abort().catch(() => undefined);
    throw err;
  }
}
