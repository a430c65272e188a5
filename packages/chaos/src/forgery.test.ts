import { decodeMessage, encodeMessage, ErrorCode } from '@rebound/core';
import { describe, expect, it } from 'vitest';
import { JOB_FILE_DAMAGE } from './faults.js';
import { FORGED_CALLS, forgeryProblem } from './forgery.js';
import { damagedBytes } from './inject-hostile.js';

describe('forged calls', () => {
  const call = FORGED_CALLS.find((c) => c.method === 'CancelTask' && c.refusedWith === ErrorCode.EPOCH_UNCONFIRMED)!;

  it('are judged by the refusal they meet: answered or refused otherwise is a finding, unreachable proves nothing', () => {
    expect(forgeryProblem(call, { outcome: 'refused', code: ErrorCode.EPOCH_UNCONFIRMED, message: 'x' })).toBeUndefined();
    expect(forgeryProblem(call, { outcome: 'accepted' })).toMatch(/CancelTask with a forged epoch: accepted \(must be refused with EPOCH_UNCONFIRMED\)/);
    expect(forgeryProblem(call, { outcome: 'refused', code: ErrorCode.STALE_EPOCH, message: 'old' })).toMatch(/refused with STALE_EPOCH \(old\), not EPOCH_UNCONFIRMED/);
    expect(forgeryProblem(call, { outcome: 'unreachable', message: 'gone' })).toBeUndefined();
  });

  it('cover every service without credentials and the TaskManager fence with a forged epoch, each named once', () => {
    expect(new Set(FORGED_CALLS.map((c) => c.name)).size).toBe(FORGED_CALLS.length);
    const unauthenticated = new Set(FORGED_CALLS.filter((c) => c.credentials !== 'cluster').map((c) => c.service));
    expect([...unauthenticated].sort()).toEqual(['Dispatcher', 'JobMasterGateway', 'PartitionService', 'TaskExecutorGateway']);
    expect(FORGED_CALLS.filter((c) => c.credentials !== 'cluster').every((c) => c.refusedWith === ErrorCode.UNAUTHENTICATED)).toBe(true);
    expect(FORGED_CALLS.filter((c) => c.refusedWith === ErrorCode.EPOCH_UNCONFIRMED).map((c) => c.method).sort()).toEqual(
      ['CancelTask', 'DeployTask', 'DisconnectJob', 'GetAndRetainPartitionsWithMetrics', 'ReleasePartitions'],
    );
  });
});

describe('damaged job files', () => {
  const status = Buffer.from(`${JSON.stringify({ state: 'FINISHED', finishedAtMs: 1_764_590_000_000 })}\n`);
  const graph = Buffer.from(encodeMessage('JobGraph', { job_id: 'j1', name: 'wordcount', vertices: [{ id: 'v1', name: 'Source', parallelism: 2 }] }));

  it.each(JOB_FILE_DAMAGE['status.json'].flatMap((d) => [1, 2, 3].map((seed) => [d, seed] as const)))('status.json %s (seed %d) is no JSON', (damage, seed) => {
    expect(() => JSON.parse(damagedBytes(damage, status, seed).toString('utf8'))).toThrow();
  });

  it.each([1, 2, 3])('jobgraph.pb garbage (seed %d) cannot be decoded', (seed) => {
    expect(() => decodeMessage('JobGraph', damagedBytes('garbage', graph, seed))).toThrow(/invalid wire type/);
  });

  it('jobgraph.pb zeros decode as a graph of no job (the store must tell it by its job id)', () => {
    expect(decodeMessage<{ job_id: string }>('JobGraph', damagedBytes('zeros', graph, 1)).job_id).toBe('');
  });
});
