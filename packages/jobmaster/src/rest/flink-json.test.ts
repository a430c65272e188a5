import { describe, expect, it } from 'vitest';
import { ExceptionHistory, type ExceptionHistoryEntry } from '../exception-history.js';
import { jobExceptions } from './flink-json.js';

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
    const body = jobExceptions({ job_id: 'j', name: 'n', state: 'FAILED', failure: 'restart strategy exhausted', finished_at_ms: 30, vertices: [] }, history);
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
    const body = jobExceptions({ job_id: 'j', name: 'n', state: 'FINISHED', failure: '', finished_at_ms: 30, vertices: [] }, { entries: [entry('boom', 5)], truncated: false });
    expect(body['root-exception']).toBe('boom');
    expect((body.exceptionHistory as { entries: unknown[] }).entries).toHaveLength(1);
  });

  it('a stored history reads back as it was written, and a damaged one as empty', () => {
    const snapshot = { entries: [entry('boom', 5)], truncated: false };
    expect(ExceptionHistory.parse(Buffer.from(JSON.stringify(snapshot)))).toEqual(snapshot);
    expect(ExceptionHistory.parse(Buffer.from('{not json'))).toEqual({ entries: [], truncated: false });
  });
});
