import { sleep, UserCodeError, JobInvalidError, TaskCanceledError } from '@rebound/core';
import type {
  Configuration,
  IOMetrics,
  InputGateDeploymentDescriptor__Output,
  SplitResponse__Output,
  TaskDeploymentDescriptor__Output,
} from '@rebound/core';
import type { ProcessContext, SourceSplit, Transformation } from '@rebound/api';
import { groupingKey } from '@rebound/api';
import { createKeyedAggregator } from './keyed-reducer.js';
import { composeChain, keySelectorOf, lookup, type Emit } from './operator-chain.js';
import { DRAIN_BATCH_SIZE, EventLoopTurns } from './event-loop-turns.js';
import { OutputEmitter } from './output-emitter.js';
import type { ShuffleEnvironment } from './shuffle-environment.js';
import { SinkWriter } from './sink-writer.js';

export { InputPartitionNotFoundError } from './shuffle-environment.js';

export interface TaskEnvironment {
  readonly tdd: TaskDeploymentDescriptor__Output;
  readonly operators: ReadonlyMap<string, Transformation>;
  /** Where the task's partition goes and its inputs come from (local, or shuffle workers). */
  readonly shuffle: ShuffleEnvironment;
  readonly taskManagerId: string;
  readonly config: Configuration;
  readonly signal: AbortSignal;
  requestSplit(operatorId: string): Promise<SplitResponse__Output>;
  /** Sends a JSON request to the coordinator of `operatorId`; resolves to its JSON answer. */
  sendCoordinationRequest(operatorId: string, requestJson: string): Promise<string>;
}

function checkCanceled(signal: AbortSignal): void {
  if (signal.aborted) throw new TaskCanceledError(String(signal.reason ?? 'task canceled'));
}

/**
 * Settles like `call`, but rejects at once when the task is canceled. A split request to a
 * JobMaster that hangs (paused, partitioned away) otherwise keeps a canceled task, its slot and
 * its half-written partition alive until rpc.timeout, while the new leader already redeploys it.
 */
function unlessCanceled<T>(call: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new TaskCanceledError(String(signal.reason ?? 'task canceled')));
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
function readInput(env: TaskEnvironment, gate: InputGateDeploymentDescriptor__Output): AsyncGenerator<unknown[]> {
  return env.shuffle.readInputGate(gate, {
    config: env.config,
    signal: env.signal,
    readCapability: env.tdd.partition_read_capability,
  });
}

/**
 * Runs one task attempt to its end: the chain head (a source reader, a keyed reduce or a hash
 * join) pushes records through the chained operators into the output partition or the sink.
 */
export async function runTask(env: TaskEnvironment): Promise<IOMetrics> {
  const { tdd, operators, signal } = env;
  const exec = tdd.execution!;
  const headId = tdd.operator_ids[0];
  if (!headId) throw new JobInvalidError('a task without operators');
  const head = operators.get(headId);
  if (!head) throw new JobInvalidError(`operator ${headId} is missing from the job module`);

  let sink: SinkWriter | undefined;
  let output: OutputEmitter | undefined;
  const turns = new EventLoopTurns();
  let end: Emit;
  const partitionWriter = await env.shuffle.createResultPartitionWriter(tdd, env.config);
  try {
    if (tdd.sink) {
      const op = lookup(operators, tdd.sink.operator_id, 'sink');
      sink = new SinkWriter(tdd.sink_temp_file, op.format, op.header);
      await sink.open();
      end = sink.emit;
    } else if (partitionWriter && tdd.output) {
      output = new OutputEmitter(
        partitionWriter,
        tdd.output,
        operators,
        env.config.getInt('taskmanager.network.combiner.max-keys'),
        turns,
      );
      end = output.emit;
    } else {
      throw new JobInvalidError(`vertex ${exec.vertex_id} has neither a sink nor an output`);
    }
    const contextOf = (operatorId: string): ProcessContext<unknown, unknown> => ({
      subtask: exec.subtask,
      parallelism: tdd.parallelism,
      attempt: exec.attempt,
      async sendRequestToCoordinator(request: unknown): Promise<unknown> {
        const json = JSON.stringify(request ?? null);
        if (json === undefined)
          throw new UserCodeError(`operator ${operatorId}: a coordination request must be JSON-encodable`);
        return JSON.parse(await unlessCanceled(env.sendCoordinationRequest(operatorId, json), signal)) as unknown;
      },
    });
    const chain = composeChain(operators, tdd.operator_ids.slice(1), end, contextOf);
    await chain.open();
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
        const reader = head.source.createReader({
          subtask: exec.subtask,
          parallelism: tdd.parallelism,
          attempt: exec.attempt,
        });
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
        const type = head.joinType ?? 'inner';
        const keepLeft = type === 'leftOuter' || type === 'fullOuter';
        const keepRight = type === 'rightOuter' || type === 'fullOuter';
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
        const matched = keepRight ? new Set<unknown>() : undefined;
        for await (const batch of readInput(env, tdd.inputs[0]!)) {
          for (const l of batch) {
            const k = groupingKey(leftKey(l));
            const matches = built.get(k);
            if (matches) {
              matched?.add(k);
              for (const r of matches) chain.push(fn(l, r));
            } else if (keepLeft) {
              chain.push(fn(l, null));
            }
          }
          recordsIn += batch.length;
          await afterBatch();
        }
        if (matched) {
          // Unmatched right rows in build order: the same records, in the same order, on a rerun.
          let n = 0;
          for (const [k, rights] of built) {
            if (matched.has(k)) continue;
            for (const r of rights) chain.push(fn(null, r));
            n += rights.length;
            if (n >= DRAIN_BATCH_SIZE) {
              n = 0;
              await afterBatch();
            }
          }
          await afterBatch();
        }
        break;
      }
      case 'union': {
        for (const gate of tdd.inputs) {
          for await (const batch of readInput(env, gate)) {
            for (const r of batch) chain.push(r);
            recordsIn += batch.length;
            await afterBatch();
          }
        }
        break;
      }
      default:
        throw new JobInvalidError(`operator ${head.id} (${head.kind}) cannot head a task`);
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
