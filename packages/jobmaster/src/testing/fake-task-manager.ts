import * as grpc from '@grpc/grpc-js';
import { bindServer, handleUnary, loadProto, partitionKey, shutdownServer, silentLogger } from '@rebound/core';
import type {
  PartitionWithMetrics,
  TaskDeploymentDescriptor__Output,
  TaskExecutorGatewayHandlers,
} from '@rebound/core';
import type { JobMaster } from '../job-master.js';

/** For the JobMaster's unit tests: a TaskManager that records what it is asked to do. */

export interface Retained {
  /** What GetAndRetainPartitionsWithMetrics answers, after `delayMs`. */
  partitions: PartitionWithMetrics[];
  delayMs: number;
  released: string[];
}

export async function fakeTaskManager(
  deployed: TaskDeploymentDescriptor__Output[],
  retained: Retained = { partitions: [], delayMs: 0, released: [] },
): Promise<{ address: string; close(): Promise<void> }> {
  const handlers: TaskExecutorGatewayHandlers = {
    DeployTask: handleUnary((tdd) => {
      deployed.push(tdd);
      return { accepted: true };
    }, silentLogger()),
    CancelTask: handleUnary(() => ({ found: true }), silentLogger()),
    HeartbeatFromJobManager: handleUnary(() => ({ task_manager_id: '' }), silentLogger()),
    ReleasePartitions: handleUnary((r) => {
      retained.released.push(...r.partitions.map((p) => partitionKey(p)));
      return { released: r.partitions.length };
    }, silentLogger()),
    GetAndRetainPartitionsWithMetrics: handleUnary(async () => {
      await new Promise((r) => setTimeout(r, retained.delayMs));
      return { partitions: retained.partitions };
    }, silentLogger()),
    DisconnectJob: handleUnary(() => ({}), silentLogger()),
  };
  const server = new grpc.Server();
  server.addService(loadProto().TaskExecutorGateway.service, handlers);
  const port = await bindServer(server, '127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, close: () => shutdownServer(server, 100) };
}

/** Tells `job` that the attempt `tdd` deployed finished, as its TaskManager would. */
export function finishTask(
  job: JobMaster,
  tdd: TaskDeploymentDescriptor__Output,
  subpartitionBytes: number[] = [],
): void {
  job.onTaskExecutionState({
    execution: tdd.execution,
    state: 'FINISHED',
    task_manager_id: '',
    epoch: tdd.epoch,
    io_metrics: { records_in: 1, records_out: 1, bytes_in: 0, bytes_out: 0, subpartition_bytes: subpartitionBytes },
    error_code: '',
    error_message: '',
    missing_partition: null,
  });
}

export async function until(cond: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
