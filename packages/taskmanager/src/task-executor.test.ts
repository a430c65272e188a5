import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { Configuration, ErrorCode, fromServiceError, silentLogger, systemClock } from '@rebound/core';
import type { TaskExecutorGatewayHandlers } from '@rebound/core';
import { EpochFence } from '@rebound/ha';
import { afterEach, describe, expect, it } from 'vitest';
import { ModuleCache } from './module-cache.js';
import { PartitionStore } from '@rebound/partition';
import { ReadCapabilities } from './read-capabilities.js';
import { TaskExecutor } from './task-executor.js';

type Handler = (
  call: { request: unknown },
  callback: (err: Partial<grpc.StatusObject> | null, res?: unknown) => void,
) => void;

/** Calls a handler as the gRPC server would; resolves with its answer or its error's stable code. */
function call(
  handlers: TaskExecutorGatewayHandlers,
  method: keyof TaskExecutorGatewayHandlers,
  request: Record<string, unknown>,
): Promise<{ ok: unknown } | { code: string }> {
  return new Promise((resolve) => {
    (handlers[method] as unknown as Handler)({ request }, (err, res) => {
      if (err) resolve({ code: fromServiceError({ ...err, metadata: err.metadata }).code });
      else resolve({ ok: res });
    });
  });
}

describe('TaskExecutor session check', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('refuses JobMaster calls of the current epoch without the session this TaskManager registered with', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rebound-te-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const store = await PartitionStore.open({ dataDir: dir, logger: silentLogger() });
    cleanup.push(() => store.close());
    const fence = new EpochFence(async () => 4, 4);
    const executor = new TaskExecutor(
      'tm-1',
      2,
      store,
      new ModuleCache(join(dir, 'modules')),
      Configuration.of({}),
      silentLogger(),
      systemClock,
      fence,
      'session-1',
      new ReadCapabilities(silentLogger()),
    );
    cleanup.push(() => executor.close());
    const handlers = executor.handlers();
    const execution = { job_id: 'j', vertex_id: 'v', subtask: 0, attempt: 0 };
    const forged: [keyof TaskExecutorGatewayHandlers, Record<string, unknown>][] = [
      ['DeployTask', { epoch: 4, execution }],
      ['CancelTask', { epoch: 4, execution }],
      ['ReleasePartitions', { epoch: 4, partitions: [] }],
      ['GetAndRetainPartitionsWithMetrics', { epoch: 4, job_id: 'j' }],
      ['DisconnectJob', { epoch: 4, job_id: 'j', release_partitions: true }],
      ['HeartbeatFromJobManager', { epoch: 4 }],
    ];
    for (const [method, request] of forged) {
      expect(await call(handlers, method, { ...request, session_id: '' }), String(method)).toEqual({
        code: ErrorCode.PERMISSION_DENIED,
      });
      expect(await call(handlers, method, { ...request, session_id: 'session-2' }), String(method)).toEqual({
        code: ErrorCode.PERMISSION_DENIED,
      });
    }
    // The leader, which knows the session, is served.
    expect(await call(handlers, 'ReleasePartitions', { epoch: 4, partitions: [], session_id: 'session-1' })).toEqual({
      ok: { released: 0 },
    });
    expect(await call(handlers, 'CancelTask', { epoch: 4, execution, session_id: 'session-1' })).toEqual({
      ok: { found: false },
    });
    expect(await call(handlers, 'HeartbeatFromJobManager', { epoch: 4, session_id: 'session-1' })).toEqual({
      ok: { task_manager_id: 'tm-1' },
    });
    // A deposed leader's epoch is still refused first as stale.
    expect(await call(handlers, 'ReleasePartitions', { epoch: 3, partitions: [], session_id: 'session-1' })).toEqual({
      code: ErrorCode.STALE_EPOCH,
    });
  });
});
