/**
 * A TaskManager as partition reconciliation sees it, in a process of its own (as a real one is,
 * so encoding its answer costs the JobMaster nothing but the wait): a TaskExecutorGateway server
 * that reports the retained partitions of one job and releases on request.
 *
 *   tsx bench/recovery/fake-taskmanager.ts --job-id J --vertex-id V --first S --step K --count N
 *       --subpartitions P [--stale M] [--epoch E]
 *
 * Partitions: subtasks S, S+K, ... (N of them), attempt 0 deployed by the leader of epoch E
 * (default 1: ids carry the epoch, as real ones do), P subpartitions with their byte counts; plus
 * M stale ones (attempt 7, same epoch) no event names. Prints `{"port": N}` once serving; exits
 * when its stdin closes, so it never outlives the benchmark.
 */
import * as grpc from '@grpc/grpc-js';
import { parseArgs } from 'node:util';
import {
  bindServer,
  handleUnary,
  silentLogger,
  loadProto,
  packSubpartitionBytes,
  type PartitionWithMetrics,
  type TaskExecutorGatewayHandlers,
} from '@rebound/core';

const { values } = parseArgs({
  options: {
    'job-id': { type: 'string' },
    'vertex-id': { type: 'string' },
    first: { type: 'string', default: '0' },
    step: { type: 'string', default: '1' },
    count: { type: 'string', default: '0' },
    subpartitions: { type: 'string', default: '128' },
    stale: { type: 'string', default: '0' },
    epoch: { type: 'string', default: '1' },
  },
  strict: true,
});
const jobId = values['job-id'] ?? '';
const vertexId = values['vertex-id'] ?? '';
const first = Number(values.first);
const step = Number(values.step);
const count = Number(values.count);
const subpartitions = Number(values.subpartitions);
const epoch = Number(values.epoch);

/** The same byte counts the benchmark's first JobMaster recorded for each subtask. */
function subpartitionBytesOf(subtask: number, n: number): number[] {
  return Array.from({ length: n }, (_, k) => 2_000 + ((subtask * 7919 + k * 104_729) % 20_000));
}

const partitions: PartitionWithMetrics[] = [];
for (let i = 0; i < count; i++) {
  const subtask = first + i * step;
  const bytes = subpartitionBytesOf(subtask, subpartitions);
  partitions.push({
    partition_id: { job_id: jobId, vertex_id: vertexId, subtask, attempt: 0, epoch },
    num_subpartitions: subpartitions,
    total_bytes: bytes.reduce((a, b) => a + b, 0),
    packed_subpartition_bytes: packSubpartitionBytes(bytes),
  });
}
for (let i = 0; i < Number(values.stale); i++) {
  partitions.push({
    partition_id: { job_id: jobId, vertex_id: vertexId, subtask: first + i * step, attempt: 7, epoch },
    num_subpartitions: subpartitions,
    total_bytes: 1,
    packed_subpartition_bytes: packSubpartitionBytes([1]),
  });
}

const unsupported = handleUnary<unknown, never>(() => {
  throw new Error('not part of the benchmark');
}, silentLogger());
const handlers: TaskExecutorGatewayHandlers = {
  DeployTask: unsupported,
  CancelTask: unsupported,
  HeartbeatFromJobManager: unsupported,
  DisconnectJob: handleUnary(() => ({}), silentLogger()),
  ReleasePartitions: handleUnary((req) => ({ released: req.partitions.length }), silentLogger()),
  GetAndRetainPartitionsWithMetrics: handleUnary(() => ({ partitions }), silentLogger()),
};
const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
server.addService(loadProto().TaskExecutorGateway.service, handlers);
const port = await bindServer(server, '127.0.0.1', 0);
process.stdout.write(`${JSON.stringify({ port })}\n`);
process.stdin.resume();
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
