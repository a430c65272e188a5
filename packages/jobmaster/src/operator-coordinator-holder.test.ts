import { describe, expect, it } from 'vitest';
import { ErrorCode, ReboundError, silentLogger, type JobGraph__Output } from '@rebound/core';
import type { OperatorCoordinator, OperatorCoordinatorProvider } from '@rebound/api';
import type { JobEventRecord } from '@rebound/event-store';
import { ReplayedJobState } from './recovery/job-event-replay.js';
import { OperatorCoordinatorHolder } from './operator-coordinator-holder.js';

class Counter implements OperatorCoordinator<{ add: number }, number, { total: number }> {
  readonly supportsBatchSnapshot = true;
  readonly log: string[] = [];
  constructor(public total: number) {}
  handleRequest(subtask: number, attempt: number, req: { add: number }): number {
    this.log.push(`request ${subtask}/${attempt}`);
    this.total += req.add;
    return this.total;
  }
  subtaskReset(subtask: number, attempt: number): void {
    this.log.push(`reset ${subtask}/${attempt}`);
  }
  snapshotState(): { total: number } {
    return { total: this.total };
  }
}

function holder(
  provider: OperatorCoordinatorProvider<{ add: number }, number, { total: number }>,
  maxHeldResponses = 10_000,
): OperatorCoordinatorHolder {
  return new OperatorCoordinatorHolder(
    'v-op-1',
    'op-2',
    'Count',
    provider as OperatorCoordinatorProvider,
    3,
    silentLogger(),
    maxHeldResponses,
  );
}

describe('OperatorCoordinatorHolder', () => {
  it('answers JSON requests, snapshots to JSON and restores from it', async () => {
    const made: Counter[] = [];
    const h = holder({
      create: () => (made.push(new Counter(0)), made.at(-1)!),
      restore: (_ctx, s) => (made.push(new Counter(s.total)), made.at(-1)!),
    });
    expect(h.supportsBatchSnapshot()).toBe(true);
    expect(await h.handleRequest(1, 0, JSON.stringify({ add: 5 }))).toBe('5');
    const snapshot = h.snapshotNow();
    expect(JSON.parse(Buffer.from(snapshot).toString('utf8'))).toEqual({ total: 5 });
    await h.handleRequest(2, 0, JSON.stringify({ add: 1 }));
    await h.resetToCheckpoint(snapshot);
    expect(await h.handleRequest(0, 1, JSON.stringify({ add: 2 }))).toBe('7');
    h.subtaskReset(2, 1);
    expect(made.at(-1)!.log).toEqual(['request 0/1', 'reset 2/1']);
  });

  it('does not claim batch snapshots without restore, and a failure names the operator', async () => {
    const h = holder({
      create: () => ({
        supportsBatchSnapshot: true,
        snapshotState: () => ({ total: 0 }),
        handleRequest: () => {
          throw new Error('quota exceeded');
        },
      }),
    });
    expect(h.supportsBatchSnapshot()).toBe(false);
    const err = await h.handleRequest(1, 3, '{"add":1}').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReboundError);
    expect((err as ReboundError).code).toBe(ErrorCode.USER_CODE);
    expect((err as Error).message).toBe(
      "coordinator of 'Count' (op-2): handling a request of subtask 1 (attempt 3) failed: quota exceeded",
    );
    expect(() =>
      holder({
        create: () => {
          throw new Error('no');
        },
      }),
    ).toThrow("coordinator of 'Count' (op-2): creating it failed: no");
  });
});

describe('OperatorCoordinatorHolder answers kept for finished events', () => {
  const adopting = (): OperatorCoordinatorProvider<{ add: number }, number, { total: number }> => ({
    create: () => Object.assign(new Counter(0), { subtaskAdopted: () => {} }),
    restore: (_ctx, s) => new Counter(s.total),
  });
  const answers = (inc: Uint8Array | undefined) =>
    inc && OperatorCoordinatorHolder.responsesOfIncrement(inc)?.map((j) => JSON.parse(j) as unknown);

  it("records every answer of the subtask's current attempt, and forgets a reset one", async () => {
    const h = holder(adopting());
    await h.handleRequest(1, 0, '{"add":2}');
    await h.handleRequest(1, 0, '{"add":3}');
    expect(answers(h.increment(1, 0, true))).toEqual([2, 5]);
    // Asked nothing: nothing to record, if this leader deployed it; unknown if not.
    expect(answers(h.increment(0, 0, true))).toEqual([]);
    expect(h.increment(0, 0, false)).toBeUndefined();
    h.subtaskReset(1, 1);
    await h.handleRequest(1, 1, '{"add":1}');
    expect(answers(h.increment(1, 1, true))).toEqual([6]);
  });

  it("an adopted attempt's answers are the TaskManager's list and what came after", async () => {
    const h = holder(adopting());
    h.subtaskAdopted(2, 4, ['10', '20']);
    await h.handleRequest(2, 4, '{"add":1}');
    expect(answers(h.increment(2, 4, false))).toEqual([10, 20, 1]);
  });

  it('records nothing past max-held-coordinator-responses, nor for a coordinator without subtaskAdopted', async () => {
    const h = holder(adopting(), 2);
    for (let i = 0; i < 3; i++) await h.handleRequest(0, 0, '{"add":1}');
    expect(h.increment(0, 0, true)).toBeUndefined();
    const plain = holder({ create: () => new Counter(0), restore: (_ctx, s) => new Counter(s.total) });
    await plain.handleRequest(0, 0, '{"add":1}');
    expect(plain.increment(0, 0, true)).toBeUndefined();
  });

  it('an increment that does not parse as a list is refused, not thrown', () => {
    expect(OperatorCoordinatorHolder.responsesOfIncrement(Buffer.from('{"a":1}'))).toBeUndefined();
    expect(OperatorCoordinatorHolder.responsesOfIncrement(Buffer.from('[1,'))).toBeUndefined();
    expect(OperatorCoordinatorHolder.responsesOfIncrement(Buffer.from('[{"a":1},null]'))).toEqual(['{"a":1}', 'null']);
  });
});

describe('ReplayedJobState.dropFinishedAfterSnapshot', () => {
  const graph = { vertices: [{ id: 'v' }, { id: 'w' }] } as unknown as JobGraph__Output;
  const finished = (vertex: string, subtask: number, snapshot?: string): JobEventRecord =>
    ({
      type: 'ExecutionVertexFinished',
      writtenAtMs: 0,
      event: {
        vertex_id: vertex,
        subtask,
        attempt: 0,
        coordinator_snapshots: snapshot ? [{ operator_id: snapshot, state: new Uint8Array([1]) }] : [],
        coordinator_increments: [],
      },
    }) as unknown as JobEventRecord;
  const initialized = (vertex: string): JobEventRecord =>
    ({
      type: 'ExecutionJobVertexInitialized',
      writtenAtMs: 0,
      event: { vertex_id: vertex, parallelism: 4, inputs: [] },
    }) as unknown as JobEventRecord;

  it('keeps what finished up to the newest snapshot of the operator, and other vertices untouched', () => {
    const r = new ReplayedJobState(graph);
    for (const e of [
      initialized('v'),
      initialized('w'),
      finished('v', 0),
      finished('v', 1, 'op'),
      finished('w', 0),
      finished('v', 2),
    ])
      r.apply(e);
    expect(r.dropFinishedAfterSnapshot('v', 'op')).toBe(1);
    expect(r.finishedOf('v').map((e) => e.subtask)).toEqual([0, 1]);
    expect(r.finishedOf('w')).toHaveLength(1);
    expect(r.dropFinishedAfterSnapshot('v', 'never-snapshotted')).toBe(2);
    expect(r.dropFinishedAfterSnapshot('w')).toBe(1);
    expect(r.finishedCount).toBe(0);
  });

  it('keeps the newest finish of a subtask in the order of the finishes, forgets a reset one, remembers attempts', () => {
    const r = new ReplayedJobState(graph);
    const again = (subtask: number, attempt: number): JobEventRecord => {
      const e = finished('v', subtask);
      return { ...e, event: { ...(e.event as object), attempt } } as JobEventRecord;
    };
    const reset = (subtask: number): JobEventRecord =>
      ({
        type: 'ExecutionVertexReset',
        writtenAtMs: 0,
        event: { vertices: [{ vertex_id: 'v', subtask }] },
      }) as unknown as JobEventRecord;
    for (const e of [initialized('v'), finished('v', 0), finished('v', 1), again(0, 3), finished('v', 2), reset(1)])
      r.apply(e);
    expect(r.finished().map((e) => `${e.subtask}.${e.attempt}`)).toEqual(['0.3', '2.0']);
    expect(r.finishedCount).toBe(2);
    expect([0, 1, 2, 3].map((s) => r.maxAttempt('v', s))).toEqual([3, 0, 0, -1]);
    // Subtask 0's second finish came after subtask 1's: it is what a snapshot there would not cover.
    r.apply(finished('v', 3, 'op'));
    expect(r.finishedAfterSnapshot('v', 'op')).toEqual([]);
    r.apply(again(2, 1));
    expect(r.finishedAfterSnapshot('v', 'op').map((e) => `${e.subtask}.${e.attempt}`)).toEqual(['2.1']);
  });
});
