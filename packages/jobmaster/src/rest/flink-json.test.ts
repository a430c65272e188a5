import { describe, expect, it } from 'vitest';
import type { ExceptionHistoryEntry } from '../exception-history.js';
import { jobExceptions, recoveryTimeline } from './flink-json.js';

const entry = (stacktrace: string, timestamp: number): ExceptionHistoryEntry => ({
  exceptionName: 'TaskFailure',
  stacktrace,
  timestamp,
  taskName: 'Map (2/4)',
  endpoint: '127.0.0.1:6124',
  taskManagerId: 'tm-2',
  failureLabels: {},
  concurrentExceptions: [],
});

describe('GET /jobs/:id/exceptions', () => {
  it("lists the tasks' failures newest first, after the job's own failure, in Flink 2's and 1.x's fields", () => {
    const history = { entries: [entry('boom 2', 20), entry('boom 1', 10)], truncated: true };
    const body = jobExceptions(
      {
        job_id: 'j',
        name: 'n',
        state: 'FAILED',
        failure: 'restart strategy exhausted',
        finished_at_ms: 30,
        vertices: [],
      },
      history,
    );
    expect(body['root-exception']).toBe('restart strategy exhausted');
    expect(body.timestamp).toBe(30);
    expect(body.truncated).toBe(true);
    const h = body.exceptionHistory as { entries: ExceptionHistoryEntry[]; truncated: boolean };
    expect(h.entries.map((e) => [e.exceptionName, e.stacktrace, e.timestamp])).toEqual([
      ['JobFailure', 'restart strategy exhausted', 30],
      ['TaskFailure', 'boom 2', 20],
      ['TaskFailure', 'boom 1', 10],
    ]);
    expect(body['all-exceptions']).toEqual([
      { exception: 'boom 2', task: 'Map (2/4)', location: '127.0.0.1:6124', timestamp: 20, taskManagerId: 'tm-2' },
      { exception: 'boom 1', task: 'Map (2/4)', location: '127.0.0.1:6124', timestamp: 10, taskManagerId: 'tm-2' },
    ]);
  });

  it('a job that finished after task failures has no root exception of its own but shows them', () => {
    const body = jobExceptions(
      { job_id: 'j', name: 'n', state: 'FINISHED', failure: '', finished_at_ms: 30, vertices: [] },
      { entries: [entry('boom', 5)], truncated: false },
    );
    expect(body['root-exception']).toBe('boom');
    expect((body.exceptionHistory as { entries: unknown[] }).entries).toHaveLength(1);
  });
});

describe('GET /jobs/:id/recoveries', () => {
  it('counts the running tasks a failover adopted (keep-running-tasks) next to those reused and rerun', () => {
    const row = recoveryTimeline({
      epoch: 2,
      elected_at_ms: 1_000,
      started_at_ms: 1_100,
      finished_at_ms: 1_500,
      replay_ms: 20,
      reconnect_wait_ms: 300,
      executions_recovered: 3,
      executions_reset: 1,
      running_tasks_adopted: 4,
      finished_tasks_reported: 2,
    });
    expect(row.tasks).toEqual({ reused: 3, rerun: 1, adopted: 4, finishedWhileLeaderless: 2 });
    // An older report without the fields: 0, never absent (the dashboard always shows the count).
    expect(recoveryTimeline({ epoch: 3 }).tasks).toEqual({
      reused: 0,
      rerun: 0,
      adopted: 0,
      finishedWhileLeaderless: 0,
    });
  });
});
