import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@rebound/core';
import { sequenceSource, type SourceSplit } from '@rebound/api';
import { SourceCoordinator } from './source-coordinator.js';

const SPLITS = 12;
const source = () => sequenceSource(0, SPLITS - 1, { splitSize: 1 });

async function coordinator(parallelism: number): Promise<SourceCoordinator> {
  const c = new SourceCoordinator('op-1', 'Source: Seq', source(), parallelism, silentLogger());
  await c.start();
  return c;
}

/** Asks for splits until the coordinator says there are no more (or has none right now). */
function drain(c: SourceCoordinator, subtask: number, attempt: number): SourceSplit[] {
  const got: SourceSplit[] = [];
  for (;;) {
    const a = c.requestSplit(subtask, attempt);
    if ('split' in a) got.push(a.split);
    else return got;
  }
}

describe('SourceCoordinator', () => {
  it('hands each reader its fair share, then no more splits', async () => {
    const c = await coordinator(4);
    const per = [0, 1, 2, 3].map((s) => drain(c, s, 0).map((x) => x.id));
    expect(per.map((p) => p.length)).toEqual([3, 3, 3, 3]);
    expect(new Set(per.flat()).size).toBe(SPLITS);
  });

  it('gives a reset reader its splits back under its new attempt', async () => {
    const c = await coordinator(2);
    const first = drain(c, 0, 0).map((s) => s.id);
    c.subtaskReset(0, 1);
    expect(() => c.requestSplit(0, 0)).toThrow(/stale attempt 0/);
    expect(drain(c, 0, 1).map((s) => s.id)).toEqual(first);
  });

  it('names the vertex when an enumerator hands out a split twice', async () => {
    const split = { id: 'only' };
    const c = new SourceCoordinator(
      'op-1',
      'Source: Broken',
      {
        sourceName: 'broken',
        supportsBatchSnapshot: false,
        createEnumerator: (ctx) => ({
          start() {},
          handleSplitRequest(subtask: number) {
            ctx.assignSplit(split, subtask);
          },
          addSplitsBack() {},
          addReader() {},
          snapshotState: () => null,
          close() {},
        }),
        restoreEnumerator: () => {
          throw new Error('no');
        },
        createReader: () => ({ read: async function* () {} }),
      },
      2,
      silentLogger(),
    );
    await c.start();
    c.requestSplit(0, 0);
    expect(() => c.requestSplit(1, 0)).toThrow(/source 'Source: Broken': the enumerator assigned split 'only' twice/);
  });

  /**
   * The recovery claim: whatever happened before a JobMaster died (assignments, finished and reset
   * subtasks, snapshots at any point), restoring from the newest snapshot plus the increments of the
   * finished events that survived hands out exactly the splits no finished subtask consumed.
   */
  it('restores exactly the unconsumed splits from any snapshot and the surviving finished increments', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('request' as const), subtask: fc.nat(3) }),
      fc.record({ kind: fc.constant('finish' as const), subtask: fc.nat(3) }),
      fc.record({ kind: fc.constant('reset' as const), subtask: fc.nat(3) }),
      fc.record({ kind: fc.constant('snapshot' as const) }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), fc.boolean(), async (ops, withSnapshots) => {
        const live = await coordinator(4);
        const attempts = [0, 0, 0, 0];
        // What the JobMaster writes in finished events (the increments, code under test) ...
        const finished = new Map<number, SourceSplit[]>();
        // ... and, independently, what each reader's current attempt was actually handed.
        const handed: string[][] = [[], [], [], []];
        const consumed = new Map<number, string[]>();
        let snapshot: Uint8Array | undefined;
        for (const o of ops) {
          if (o.kind === 'snapshot') {
            if (withSnapshots) snapshot = await live.checkpointCoordinator(-1);
          } else if (o.kind === 'request') {
            if (finished.has(o.subtask)) continue;
            const a = live.requestSplit(o.subtask, attempts[o.subtask]!);
            if ('split' in a) handed[o.subtask]!.push(a.split.id);
          } else if (o.kind === 'finish') {
            // A reader finishes only once it was told there are no more splits.
            if (finished.has(o.subtask)) continue;
            handed[o.subtask]!.push(...drain(live, o.subtask, attempts[o.subtask]!).map((x) => x.id));
            live.subtaskFinished(o.subtask, attempts[o.subtask]!);
            const increment = JSON.parse(Buffer.from(live.increment(o.subtask)).toString('utf8')) as SourceSplit[];
            expect(increment.map((x) => x.id).sort()).toEqual([...handed[o.subtask]!].sort());
            finished.set(o.subtask, increment);
            consumed.set(o.subtask, [...handed[o.subtask]!]);
          } else {
            attempts[o.subtask]!++;
            live.subtaskReset(o.subtask, attempts[o.subtask]!);
            finished.delete(o.subtask);
            consumed.delete(o.subtask);
            handed[o.subtask] = [];
          }
        }
        // The JobMaster dies; a new one restores.
        const restored = await coordinator(4);
        const next = new Map(attempts.map((a, i) => [i, finished.has(i) ? a : a + 1]));
        await restored.restore(snapshot, finished, next);
        const handedOut: string[] = [];
        for (let s = 0; s < 4; s++) {
          if (!finished.has(s)) handedOut.push(...drain(restored, s, next.get(s)!).map((x) => x.id));
        }
        const all = [...[...consumed.values()].flat(), ...handedOut].sort();
        expect(all).toEqual(Array.from({ length: SPLITS }, (_, i) => `range-${i}-${i + 1}`).sort());
      }),
      { numRuns: 300 },
    );
  });
});
