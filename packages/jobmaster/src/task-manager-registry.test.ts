import * as grpc from '@grpc/grpc-js';
import {
  Configuration,
  ErrorCode,
  PermissionDeniedError,
  ReboundError,
  bindServer,
  handleUnary,
  loadProto,
  shutdownServer,
  silentLogger,
} from '@rebound/core';
import type { RegisterTaskManagerRequest__Output } from '@rebound/core';
import { afterEach, describe, expect, it } from 'vitest';
import { authorizeExecutionCall, type ExecutionOwners } from './execution-authorization.js';
import type { ExecutionVertex } from './execution-graph.js';
import { TaskManagerRegistry } from './task-manager-registry.js';

async function rejected(p: Promise<unknown>): Promise<ReboundError> {
  try {
    await p;
  } catch (e) {
    return e as ReboundError;
  }
  throw new Error('the call was accepted');
}

/** A TaskManager's HeartbeatFromJobManager: answered with `session` only, as TaskExecutor does. */
async function liveTaskManager(session: string): Promise<{ address: string; close(): Promise<void> }> {
  const server = new grpc.Server();
  server.addService(loadProto().TaskExecutorGateway.service, {
    HeartbeatFromJobManager: handleUnary((req: { session_id: string }) => {
      if (req.session_id !== session) throw new PermissionDeniedError('not my session');
      return { task_manager_id: 'tm-1' };
    }, silentLogger()),
  } as unknown as grpc.UntypedServiceImplementation);
  const port = await bindServer(server, '127.0.0.1', 0);
  return { address: `127.0.0.1:${port}`, close: () => shutdownServer(server, 100) };
}

function thrown(fn: () => unknown): ReboundError {
  try {
    fn();
  } catch (e) {
    return e as ReboundError;
  }
  throw new Error('the call was accepted');
}

const registration = (id: string, session: string, address = '127.0.0.1:9'): RegisterTaskManagerRequest__Output => ({
  task_manager_id: id,
  address,
  slots: 1,
  epoch: 3,
  jobs_with_retained_partitions: [],
  session_id: session,
});

describe('TaskManagerRegistry sessions', () => {
  let now = 1_000;
  const registries: TaskManagerRegistry[] = [];
  const lost: string[] = [];
  /** What each loss said the TaskManager still holds (undefined: nothing). */
  const kept: (string[] | undefined)[] = [];
  const newRegistry = (): TaskManagerRegistry => {
    const config = Configuration.of({ 'heartbeat.interval': '100 ms', 'heartbeat.timeout': '1 s' });
    const r = new TaskManagerRegistry(
      3,
      'jm-3',
      config,
      {
        onTaskManagerRegistered: () => {},
        onTaskManagerLost: (id, _reason, keptPartitionsOf) => {
          lost.push(id);
          kept.push(keptPartitionsOf && [...keptPartitionsOf]);
        },
      },
      silentLogger(),
      { now: () => now },
    );
    registries.push(r);
    return r;
  };

  const servers: { close(): Promise<void> }[] = [];

  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
    for (const r of registries.splice(0)) r.close();
    lost.length = 0;
    kept.length = 0;
    now = 1_000;
  });

  it('refuses a second registration of a live TaskManager id with another session, and keeps the first', async () => {
    const tm = await liveTaskManager('session-a');
    servers.push(tm);
    const registry = newRegistry();
    await registry.register(registration('tm-1', 'session-a', tm.address));
    const err = await rejected(registry.register(registration('tm-1', 'session-b', '10.0.0.2:2')));
    expect(err.code).toBe(ErrorCode.PERMISSION_DENIED);
    expect(registry.get('tm-1')).toMatchObject({ address: tm.address, session: 'session-a' });
    expect(lost).toEqual([]);
  });

  it('lets a restarted TaskManager take its id at once: the registered process no longer answers with its session', async () => {
    // A new process at the same address (it has another session), and none at all.
    const restarted = await liveTaskManager('session-new');
    servers.push(restarted);
    for (const address of [restarted.address, '127.0.0.1:9']) {
      const registry = newRegistry();
      await registry.register(registration('tm-1', 'session-old', address));
      await registry.register(registration('tm-1', 'session-new', address));
      expect(registry.get('tm-1')).toMatchObject({ session: 'session-new' });
    }
    expect(lost).toEqual(['tm-1', 'tm-1']);
    // A new process wiped its partitions: nothing of them is kept.
    expect(kept).toEqual([undefined, undefined]);
  });

  it('lets the same TaskManager (same session) register again, and another take the id once it is silent', async () => {
    const tm = await liveTaskManager('session-a');
    servers.push(tm);
    const registry = newRegistry();
    await registry.register(registration('tm-1', 'session-a', tm.address));
    await registry.register({
      ...registration('tm-1', 'session-a', tm.address),
      jobs_with_retained_partitions: ['j1'],
    });
    // Registered again: its old registration's tasks are failed over, but the same process still
    // holds the partitions it retained (chaos etcd seed 5 reran them).
    expect(lost).toEqual(['tm-1']);
    expect(kept).toEqual([['j1']]);
    now += 1_001; // no heartbeat for longer than heartbeat.timeout: the id is free without asking
    await registry.register(registration('tm-1', 'session-b', '10.0.0.9:9'));
    expect(registry.get('tm-1')).toMatchObject({ address: '10.0.0.9:9', session: 'session-b' });
  });

  it('refuses registrations without an id or a session', async () => {
    const registry = newRegistry();
    expect((await rejected(registry.register(registration('tm-1', '')))).code).toBe(ErrorCode.PERMISSION_DENIED);
    expect((await rejected(registry.register(registration('', 'session-a')))).code).toBe(ErrorCode.PERMISSION_DENIED);
    expect(registry.all()).toEqual([]);
  });

  it('accepts heartbeats only with the session the TaskManager registered with', async () => {
    const registry = newRegistry();
    await registry.register(registration('tm-1', 'session-a'));
    now += 500;
    expect(
      thrown(() => registry.heartbeat({ task_manager_id: 'tm-1', epoch: 3, running: [], session_id: 'session-b' }))
        .code,
    ).toBe(ErrorCode.PERMISSION_DENIED);
    expect(registry.get('tm-1')!.lastHeartbeatMs).toBe(1_000);
    expect(registry.heartbeat({ task_manager_id: 'tm-1', epoch: 3, running: [], session_id: 'session-a' })).toEqual({
      registered: true,
      epoch: 3,
    });
    expect(registry.get('tm-1')!.lastHeartbeatMs).toBe(1_500);
    expect(registry.heartbeat({ task_manager_id: 'tm-2', epoch: 3, running: [], session_id: 'x' })).toEqual({
      registered: false,
      epoch: 3,
    });
  });

  it('admits execution calls only from the session of the TaskManager the execution was deployed to', async () => {
    const registry = newRegistry();
    await registry.register(registration('tm-1', 'session-a'));
    await registry.register(registration('tm-2', 'session-b'));
    const execution = { job_id: 'j', vertex_id: 'sink', subtask: 0, attempt: 2 };
    const current = { attempt: 2, location: { task_manager_id: 'tm-1', address: '' } } as unknown as ExecutionVertex;
    const job: ExecutionOwners = { currentAttempt: (id) => (id?.attempt === 2 ? current : undefined) };
    const check = (tmId: string, session: string, attempt = 2) =>
      authorizeExecutionCall(
        registry,
        job,
        { execution: { ...execution, attempt }, task_manager_id: tmId, session_id: session },
        'UpdateTaskExecutionState',
        silentLogger(),
      );

    expect(check('tm-1', 'session-a').id).toBe('tm-1');
    // The right TaskManager id without its session; another TaskManager with its own valid session.
    expect(thrown(() => check('tm-1', 'session-b')).code).toBe(ErrorCode.PERMISSION_DENIED);
    expect(thrown(() => check('tm-2', 'session-b')).code).toBe(ErrorCode.PERMISSION_DENIED);
    expect(thrown(() => check('tm-9', 'session-a')).code).toBe(ErrorCode.PERMISSION_DENIED);
    // An attempt that is no longer current: a registered TaskManager may report it (it is ignored as stale).
    expect(check('tm-2', 'session-b', 1).id).toBe('tm-2');
    // Not deployed anywhere: no TaskManager holds it.
    (current as { location: unknown }).location = undefined;
    expect(thrown(() => check('tm-1', 'session-a')).code).toBe(ErrorCode.PERMISSION_DENIED);
  });
});
