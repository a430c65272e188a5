import { decodeMessage, encodeMessage, ErrorCode } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { JOB_FILE_DAMAGE } from './faults.js';
import { FORGED_CALLS, forgeryInjected, forgeryProblem, type ForgeryContext } from './forgery.js';
import { damagedBytes } from './inject-hostile.js';

describe('forged calls', () => {
  const call = FORGED_CALLS.find((c) => c.method === 'CancelTask' && c.refusedWith === ErrorCode.EPOCH_UNCONFIRMED)!;

  it('are judged by the refusal they meet: answered or refused otherwise is a finding, unreachable proves nothing', () => {
    expect(
      forgeryProblem(call, { outcome: 'refused', code: ErrorCode.EPOCH_UNCONFIRMED, message: 'x' }),
    ).toBeUndefined();
    expect(forgeryProblem(call, { outcome: 'accepted' })).toMatch(
      /CancelTask with a forged epoch: accepted \(must be refused with EPOCH_UNCONFIRMED\)/,
    );
    expect(forgeryProblem(call, { outcome: 'refused', code: ErrorCode.STALE_EPOCH, message: 'old' })).toMatch(
      /refused with STALE_EPOCH \(old\), not EPOCH_UNCONFIRMED/,
    );
    expect(forgeryProblem(call, { outcome: 'unreachable', message: 'gone' })).toBeUndefined();
  });

  it('cover every service without credentials and the TaskManager fence with a forged epoch, each named once', () => {
    expect(new Set(FORGED_CALLS.map((c) => c.name)).size).toBe(FORGED_CALLS.length);
    const unauthenticated = new Set(FORGED_CALLS.filter((c) => c.credentials !== 'cluster').map((c) => c.service));
    expect([...unauthenticated].sort()).toEqual([
      'Dispatcher',
      'JobMasterGateway',
      'PartitionService',
      'TaskExecutorGateway',
    ]);
    expect(
      FORGED_CALLS.filter((c) => c.credentials !== 'cluster').every((c) => c.refusedWith === ErrorCode.UNAUTHENTICATED),
    ).toBe(true);
    expect(
      FORGED_CALLS.filter((c) => c.refusedWith === ErrorCode.EPOCH_UNCONFIRMED)
        .map((c) => c.method)
        .sort(),
    ).toEqual(['CancelTask', 'DeployTask', 'DisconnectJob', 'GetAndRetainPartitionsWithMetrics', 'ReleasePartitions']);
  });
});

describe('forged calls as a fault', () => {
  const context = (runningFound: boolean, partitionFound: boolean): ForgeryContext => ({
    jobId: 'j',
    leaderAddress: '127.0.0.1:1',
    leaderEpoch: 3,
    taskManagerId: 'tm-1',
    taskManagerAddress: '127.0.0.1:2',
    running: { job_id: 'j', vertex_id: runningFound ? 'v' : 'forged-vertex', subtask: 0, attempt: 0 },
    runningFound,
    partition: { job_id: 'j', vertex_id: partitionFound ? 'v' : 'forged-vertex', subtask: 0, attempt: 0, epoch: 3 },
    partitionFound,
  });
  const refused = { outcome: 'refused', code: ErrorCode.PERMISSION_DENIED, message: 'no' } as const;
  const unreachable = { outcome: 'unreachable', message: 'gone' } as const;
  const all = (outcome: typeof refused | typeof unreachable) => FORGED_CALLS.map((call) => ({ call, outcome }));

  it('name what they aim at: every call about a running task or a partition says so', () => {
    const probe = context(true, true);
    for (const call of FORGED_CALLS) {
      const text = JSON.stringify(call.request(probe));
      if (call.target === 'running') expect(text, call.name).toContain('"vertex_id":"v"');
      if (call.target === undefined || call.target === 'running')
        expect(text.includes('"partition_id"') || text.includes('"partitions":[{'), call.name).toBe(false);
      if (/running task/.test(call.name)) expect(call.target, call.name).toBe('running');
      if (/finished partition/.test(call.name)) expect(call.target, call.name).toBe('partition');
    }
  });

  it('count as injected only when a call reached a real running task, never at a placeholder vertex', () => {
    expect(forgeryInjected(all(refused), context(true, false))).toBe(true);
    // Every call was answered, but at the made-up execution: nothing of the job was reached.
    expect(forgeryInjected(all(refused), context(false, true))).toBe(false);
    expect(forgeryInjected(all(unreachable), context(true, true))).toBe(false);
    // Only untargeted calls reached (SubmitJob, CancelJob, RegisterTaskManager, ...): not injected.
    const untargeted = FORGED_CALLS.map((call) => ({ call, outcome: call.target ? unreachable : refused }));
    expect(forgeryInjected(untargeted, context(true, true))).toBe(false);
    // Partition calls alone do not make the fault injected either.
    const partitions = FORGED_CALLS.map((call) => ({
      call,
      outcome: call.target === 'partition' ? refused : unreachable,
    }));
    expect(forgeryInjected(partitions, context(true, true))).toBe(false);
  });
});

describe('damaged job files', () => {
  const status = Buffer.from(`${JSON.stringify({ state: 'FINISHED', finishedAtMs: 1_764_590_000_000 })}\n`);
  const graph = Buffer.from(
    encodeMessage('JobGraph', {
      job_id: 'j1',
      name: 'wordcount',
      vertices: [{ id: 'v1', name: 'Source', parallelism: 2 }],
    }),
  );

  it.each(JOB_FILE_DAMAGE['status.json'].flatMap((d) => [1, 2, 3].map((seed) => [d, seed] as const)))(
    'status.json %s (seed %d) is no JSON',
    (damage, seed) => {
      expect(() => JSON.parse(damagedBytes(damage, status, seed).toString('utf8'))).toThrow();
    },
  );

  it.each([1, 2, 3])('jobgraph.pb garbage (seed %d) cannot be decoded', (seed) => {
    expect(() => decodeMessage('JobGraph', damagedBytes('garbage', graph, seed))).toThrow(/invalid wire type/);
  });

  it('jobgraph.pb zeros decode as a graph of no job (the store must tell it by its job id)', () => {
    expect(decodeMessage<{ job_id: string }>('JobGraph', damagedBytes('zeros', graph, 1)).job_id).toBe('');
  });
});
