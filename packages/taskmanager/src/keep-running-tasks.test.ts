import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type * as grpc from '@grpc/grpc-js';
import { Configuration, ErrorCode, fromServiceError, silentLogger, systemClock } from '@rebound/core';
import type { TaskExecutionState, TaskExecutorGatewayHandlers } from '@rebound/core';
import { EpochFence } from '@rebound/ha';
import { afterEach, describe, expect, it } from 'vitest';
import type { JobLeaderService } from './job-leader-service.js';
import { ModuleCache } from './module-cache.js';
import { PartitionStore } from '@rebound/partition';
import { ReadCapabilities } from './read-capabilities.js';
import { TaskExecutor } from './task-executor.js';

type Handler = (
  call: { request: unknown },
  callback: (err: Partial<grpc.StatusObject> | null, res?: unknown) => void,
) => void;

function call(
  handlers: TaskExecutorGatewayHandlers,
  method: keyof TaskExecutorGatewayHandlers,
  request: Record<string, unknown>,
): Promise<{ ok: unknown } | { code: string }> {
  return new Promise((resolve) => {
    (handlers[method] as unknown as Handler)({ request: { session_id: 'session-1', ...request } }, (err, res) => {
      if (err) resolve({ code: fromServiceError({ ...err, metadata: err.metadata }).code });
      else resolve({ ok: res });
    });
  });
}

async function until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const JOB = 'j'.repeat(32);
const execution = { job_id: JOB, vertex_id: 'v', subtask: 0, attempt: 3 };

/**
 * The TaskManager's side of keep-running-tasks (issue 21) without a real job: the task's module
 * load is held until the test lets it fail, so the task stays "running" in its slot as long as
 * the test needs, and what it reports at the end (and to which epoch) is observable.
 */
describe('TaskExecutor keeps running tasks without a leader', () => {
  const cleanup: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  async function setUp(jobConfig: Record<string, string>, tmConfig: Record<string, string> = {}) {
    const dir = await mkdtemp(join(tmpdir(), 'rebound-keep-'));
    cleanup.push(() => rm(dir, { recursive: true, force: true }));
    const store = await PartitionStore.open({ dataDir: dir, logger: silentLogger() });
    cleanup.push(() => store.close());
    let recorded = 4;
    const fence = new EpochFence(async () => recorded, 4);
    const executor = new TaskExecutor(
      'tm-1',
      2,
      store,
      new ModuleCache(join(dir, 'modules')),
      Configuration.of(tmConfig),
      silentLogger(),
      systemClock,
      fence,
      'session-1',
      new ReadCapabilities(silentLogger()),
    );
    cleanup.push(() => executor.close());
    let connected: number | undefined = 4;
    let failLoad: ((err: Error) => void) | undefined;
    const reports: (TaskExecutionState & { epoch: number })[] = [];
    const jobLeader = {
      connectedEpoch: () => connected,
      fetchArtifact: () =>
        new Promise<never>((_, reject) => {
          failLoad = reject;
        }),
      reportTaskState: async (u: TaskExecutionState & { epoch: number }) => {
        reports.push(u);
      },
    };
    executor.attach(jobLeader as unknown as JobLeaderService);
    const handlers = executor.handlers();
    const deployed = await call(handlers, 'DeployTask', {
      epoch: 4,
      execution,
      vertex_name: 'Source',
      parallelism: 1,
      operator_ids: ['op-1'],
      module_digest: '0'.repeat(64),
      config: { 'execution.batch.job-recovery.enabled': 'true', ...jobConfig },
    });
    expect(deployed).toEqual({ ok: { accepted: true } });
    await until(() => executor.slotUsage().busy === 1 && failLoad !== undefined, 'the task to run');
    return {
      executor,
      handlers,
      reports,
      failLoad: (msg: string) => failLoad!(new Error(msg)),
      newLeader: (epoch: number) => {
        recorded = epoch;
        connected = epoch;
        executor.onLeaderElected(epoch);
      },
    };
  }

  it('keeps the task in its slot, reports it to the next leader, which alone may cancel it', async () => {
    const t = await setUp({ 'execution.batch.job-recovery.keep-running-tasks': 'true' });
    t.executor.onJobMasterLost(4, 'heartbeat timeout');
    expect(t.executor.slotUsage().busy).toBe(1);
    expect(t.executor.retainedJobs()).toEqual([JOB]);
    t.newLeader(5);
    const res = await call(t.handlers, 'GetAndRetainPartitionsWithMetrics', {
      epoch: 5,
      job_id: JOB,
      adopt_tasks: true,
    });
    expect(res).toMatchObject({
      ok: { tasks: [{ execution, deploy_epoch: 4, state: 'RUNNING', splits_json: [] }] },
    });
    // The deposed leader is fenced; the adopting one names the task by its deploying epoch.
    expect(await call(t.handlers, 'CancelTask', { epoch: 4, execution })).toEqual({ code: ErrorCode.STALE_EPOCH });
    expect(await call(t.handlers, 'CancelTask', { epoch: 5, execution, deploy_epoch: 4 })).toEqual({
      ok: { found: true },
    });
    t.failLoad('aborted');
    await until(() => t.reports.length === 1, 'the cancel to be reported');
    expect(t.reports[0]).toMatchObject({ state: 'CANCELED', epoch: 5, deploy_epoch: 4, execution });
    expect(t.executor.slotUsage().busy).toBe(0);
  });

  it('reports a task that ended without a leader to the next one, with its end', async () => {
    const t = await setUp({ 'execution.batch.job-recovery.keep-running-tasks': 'true' });
    t.executor.onJobMasterLost(4, 'heartbeat timeout');
    t.failLoad('boom');
    await until(() => t.executor.slotUsage().busy === 0, 'the task to end');
    t.newLeader(5);
    const res = await call(t.handlers, 'GetAndRetainPartitionsWithMetrics', {
      epoch: 5,
      job_id: JOB,
      adopt_tasks: true,
    });
    expect(res).toMatchObject({ ok: { tasks: [{ execution, deploy_epoch: 4, state: 'FAILED' }] } });
  });

  it('fails the kept task when no leader adopts it within taskmanager.registration.timeout', async () => {
    const t = await setUp(
      { 'execution.batch.job-recovery.keep-running-tasks': 'true' },
      { 'taskmanager.registration.timeout': '50 ms' },
    );
    t.executor.onJobMasterLost(4, 'heartbeat timeout');
    await new Promise((r) => setTimeout(r, 200));
    t.failLoad('late');
    await until(() => t.executor.slotUsage().busy === 0, 'the task to end');
    // Aborted without a leader: nothing to report, and nothing kept for a later one.
    expect(t.reports).toEqual([]);
    t.newLeader(5);
    expect(await call(t.handlers, 'GetAndRetainPartitionsWithMetrics', { epoch: 5, job_id: JOB })).toMatchObject({
      ok: { tasks: [] },
    });
  });

  it('cut off from a leader that stays leader: registering with it anew stops the kept task', async () => {
    const t = await setUp({ 'execution.batch.job-recovery.keep-running-tasks': 'true' });
    // A network cut longer than the heartbeat timeout: the leader declared this TaskManager lost
    // and failed its tasks over; the TaskManager, seeing no leader, kept them.
    t.executor.onJobMasterLost(4, 'heartbeat timeout');
    expect(t.executor.slotUsage().busy).toBe(1);
    // The cut heals and the same leader takes a new registration: it will never adopt the task.
    t.executor.onJobMasterConnected(4);
    t.failLoad('aborted');
    await until(() => t.executor.slotUsage().busy === 0, 'the kept task to stop');
    // Stopped by the TaskManager itself (a load failure alone would report FAILED): nothing goes
    // to a leader that already failed the attempt over.
    expect(t.reports).toEqual([]);
    const res = await call(t.handlers, 'GetAndRetainPartitionsWithMetrics', { epoch: 4, job_id: JOB });
    expect(res).toMatchObject({ ok: { tasks: [] } });
  });

  it('with keep-running-tasks=false the task fails with its leader, as before', async () => {
    const t = await setUp({ 'execution.batch.job-recovery.keep-running-tasks': 'false' });
    t.executor.onJobMasterLost(4, 'heartbeat timeout');
    t.failLoad('aborted');
    await until(() => t.executor.slotUsage().busy === 0, 'the task to end');
    expect(t.reports).toEqual([]);
    t.newLeader(5);
    expect(
      await call(t.handlers, 'GetAndRetainPartitionsWithMetrics', { epoch: 5, job_id: JOB, adopt_tasks: true }),
    ).toMatchObject({
      ok: { tasks: [] },
    });
  });
});
