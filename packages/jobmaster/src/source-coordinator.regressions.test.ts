import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { silentLogger } from '@rebound/core';
import { sequenceSource, type SourceSplit } from '@rebound/api';
import { SourceCoordinator } from './source-coordinator.js';

/**
 * Regressions found by the chaos harness (packages/chaos), named after the fault that found them.
 */

const SPLITS = 12;

async function coordinator(parallelism: number): Promise<SourceCoordinator> {
  const c = new SourceCoordinator(
    'op-1',
    'Source: Seq',
    sequenceSource(0, SPLITS - 1, { splitSize: 1 }),
    parallelism,
    silentLogger(),
  );
  await c.start();
  return c;
}

function drain(c: SourceCoordinator, subtask: number, attempt: number): SourceSplit[] {
  const got: SourceSplit[] = [];
  for (;;) {
    const a = c.requestSplit(subtask, attempt);
    if ('split' in a) got.push(a.split);
    else return got;
  }
}

function increment(c: SourceCoordinator, subtask: number): SourceSplit[] {
  return JSON.parse(Buffer.from(c.increment(subtask)).toString('utf8')) as SourceSplit[];
}

const ALL = Array.from({ length: SPLITS }, (_, i) => `range-${i}-${i + 1}`).sort();

describe('SourceCoordinator regressions', () => {
  /*
   * jobmasters-pause (chaos seed 12): every JobMaster paused past taskmanager.registration.timeout,
   * so the TaskManagers released the partitions of all finished source subtasks. The new leader
   * restored from the first finished event's snapshot (snapshot.min-pause 3 min), whose enumerator
   * still queued splits that later subtasks consumed; reconciliation reset those subtasks, their
   * splits went back to the enumerator, and it then held two copies: "the enumerator assigned split
   * 'range-17400-20300' twice", and the job FAILED.
   */
  it('jobmasters-pause: resetting finished subtasks after a restore from an older snapshot hands each split out once', async () => {
    const live = await coordinator(SPLITS);
    const finished = new Map<number, SourceSplit[]>();
    // First wave: six readers take one split each; the first to finish carries the only snapshot.
    for (let s = 0; s < 6; s++) drain(live, s, 0);
    live.subtaskFinished(0, 0);
    finished.set(0, increment(live, 0));
    const snapshot = await live.checkpointCoordinator(-1);
    for (let s = 1; s < 6; s++) {
      live.subtaskFinished(s, 0);
      finished.set(s, increment(live, s));
    }
    // Second wave: splits the snapshot still has queued are consumed.
    for (let s = 6; s < 10; s++) {
      drain(live, s, 0);
      live.subtaskFinished(s, 0);
      finished.set(s, increment(live, s));
    }

    const restored = await coordinator(SPLITS);
    const attempts = new Map(Array.from({ length: SPLITS }, (_, i) => [i, finished.has(i) ? 0 : 1]));
    await restored.restore(snapshot, finished, attempts);
    // Reconciliation: every finished subtask's partition is missing, so all of them rerun.
    for (const s of finished.keys()) {
      restored.subtaskReset(s, 1);
      attempts.set(s, 1);
    }
    const handedOut: string[] = [];
    for (let s = 0; s < SPLITS; s++) handedOut.push(...drain(restored, s, attempts.get(s)!).map((x) => x.id));
    expect(handedOut.sort()).toEqual(ALL);
  });

  /*
   * leader-kill with readers kept running (chaos seed 277). A reader took a split, and its request
   * for the next one waited for a leader. The next leader's enumerator started its fair share
   * counts at zero and gave the adopted reader a second split. When a later leader reset that
   * reader (its partition was lost) both splits went back, but the enumerator counted them against
   * the reader's share of one: the rerun read one split and was told there were no more, and the
   * other stayed queued with every other reader finished. The job's words of that file were lost.
   */
  it('leader-kill: a reset reader that held more than its share after an adoption gets every split back', async () => {
    const first = await coordinator(SPLITS);
    const held = drain(first, 1, 0).slice(0, 1);
    expect(held).toHaveLength(1);

    const second = await coordinator(SPLITS);
    const attempts = new Map(Array.from({ length: SPLITS }, (_, i) => [i, 0]));
    await second.restore(undefined, new Map(), attempts);
    second.adoptReader(1, 0, held);
    const finished = new Map<number, SourceSplit[]>();
    for (let s = 0; s < SPLITS; s++) {
      drain(second, s, 0);
      second.subtaskFinished(s, 0);
      finished.set(s, increment(second, s));
    }
    expect(finished.get(1)).toHaveLength(2);
    const snapshot = await second.checkpointCoordinator(-1);

    const third = await coordinator(SPLITS);
    await third.restore(snapshot, finished, attempts);
    third.subtaskReset(1, 1);
    expect(
      drain(third, 1, 1)
        .map((x) => x.id)
        .sort(),
    ).toEqual(
      finished
        .get(1)!
        .map((x) => x.id)
        .sort(),
    );
  });

  /*
   * jobmasters-pause on remote shuffle (chaos seed 40): the old leader woke first, took every
   * shuffle worker for lost (its own pause counted as their silence), reset the finished readers,
   * gave their consumed splits back to its enumerator and deployed new readers with them, before
   * it learned that it no longer led. The new leader's log still had those subtasks finished; it
   * adopted the new readers and the job counted words twice. Such a reader must not be adopted.
   */
  it('jobmasters-pause: a kept reader that holds a split a finished subtask consumed is not adopted', async () => {
    const first = await coordinator(SPLITS);
    const one = (subtask: number): SourceSplit => {
      const a = first.requestSplit(subtask, 0);
      if (!('split' in a)) throw new Error('no split');
      return a.split;
    };
    const [s0, s1, s5] = [one(0), one(1), one(5)];
    const finished = new Map<number, SourceSplit[]>([
      [0, [s0]],
      [1, [s1]],
    ]);
    const attempts = new Map(Array.from({ length: SPLITS }, (_, i) => [i, 0]));

    const second = await coordinator(SPLITS);
    await second.restore(undefined, finished, attempts);
    expect(second.canAdoptReader([s0])).toBe(false);
    expect(second.canAdoptReader([s5, s1])).toBe(false);
    expect(second.canAdoptReader([s5])).toBe(true);
    expect(second.canAdoptReader([])).toBe(true);
    // Once a reader is adopted with a split, another reader holding it is not.
    second.adoptReader(5, 1, [s5]);
    expect(second.canAdoptReader([s5])).toBe(false);
  });

  /** The same claim as the restore property in source-coordinator.test.ts, with resets and finishes after the restore. */
  it('jobmasters-pause: after a restore, any finishes and resets still hand out every unconsumed split exactly once', async () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('request' as const), subtask: fc.nat(5) }),
      fc.record({ kind: fc.constant('finish' as const), subtask: fc.nat(5) }),
      fc.record({ kind: fc.constant('reset' as const), subtask: fc.nat(5) }),
      fc.record({ kind: fc.constant('snapshot' as const) }),
    );
    /**
     * `finished` holds the increments the JobMaster would write (code under test); `handed` and
     * `consumed` what readers were actually given, which the final check relies on instead.
     */
    const apply = async (
      c: SourceCoordinator,
      ops: readonly { kind: string; subtask?: number }[],
      attempts: number[],
      finished: Map<number, SourceSplit[]>,
      handed: string[][],
      consumed: Map<number, string[]>,
      onSnapshot: (s: Uint8Array) => void,
    ): Promise<void> => {
      for (const o of ops) {
        const s = o.subtask ?? 0;
        if (o.kind === 'snapshot') onSnapshot(await c.checkpointCoordinator(-1));
        else if (o.kind === 'request') {
          if (finished.has(s)) continue;
          const a = c.requestSplit(s, attempts[s]!);
          if ('split' in a) handed[s]!.push(a.split.id);
        } else if (o.kind === 'finish') {
          if (finished.has(s)) continue;
          handed[s]!.push(...drain(c, s, attempts[s]!).map((x) => x.id));
          c.subtaskFinished(s, attempts[s]!);
          finished.set(s, increment(c, s));
          consumed.set(s, [...handed[s]!]);
        } else {
          attempts[s]!++;
          c.subtaskReset(s, attempts[s]!);
          finished.delete(s);
          consumed.delete(s);
          handed[s] = [];
        }
      }
    };
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 50 }), fc.array(op, { maxLength: 30 }), async (before, after) => {
        const live = await coordinator(6);
        const attempts = [0, 0, 0, 0, 0, 0];
        const finished = new Map<number, SourceSplit[]>();
        const handed: string[][] = [[], [], [], [], [], []];
        const consumed = new Map<number, string[]>();
        let snapshot: Uint8Array | undefined;
        await apply(live, before, attempts, finished, handed, consumed, (s) => (snapshot ??= s));
        const restored = await coordinator(6);
        for (let s = 0; s < 6; s++) {
          if (finished.has(s)) continue;
          attempts[s]!++;
          handed[s] = [];
        }
        await restored.restore(snapshot, finished, new Map(attempts.map((a, i) => [i, a])));
        await apply(restored, after, attempts, finished, handed, consumed, () => undefined);
        const handedOut: string[] = [];
        // Readers of unfinished subtasks hand back what they hold, as a failure would.
        for (let s = 0; s < 6; s++) {
          if (finished.has(s)) continue;
          attempts[s]!++;
          restored.subtaskReset(s, attempts[s]!);
        }
        for (let s = 0; s < 6; s++)
          if (!finished.has(s)) handedOut.push(...drain(restored, s, attempts[s]!).map((x) => x.id));
        expect([...[...consumed.values()].flat(), ...handedOut].sort()).toEqual(ALL);
      }),
      { numRuns: 300 },
    );
  });

  /*
   * The restore property with keep-running-tasks: at the restore, readers still running are
   * adopted with every split their attempt was handed (as a TaskManager reports them) instead of
   * being reset, and go on asking. Seed 277's lost split was a reader adopted this way and reset
   * later (its splits came back to an enumerator that counted them against its fair share).
   */
  it('keep-running: after a restore that adopts running readers, every split is consumed exactly once', async () => {
    // As many readers as splits: a fair share of one, as the built-in sources have at most.
    const P = SPLITS;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('request' as const), subtask: fc.nat(P - 1) }),
      fc.record({ kind: fc.constant('finish' as const), subtask: fc.nat(P - 1) }),
      fc.record({ kind: fc.constant('reset' as const), subtask: fc.nat(P - 1) }),
      fc.record({ kind: fc.constant('snapshot' as const) }),
    );
    const splitOf = (id: string): SourceSplit => {
      const [, start, end] = /^range-(\d+)-(\d+)$/.exec(id)!;
      return { id, start: Number(start), end: Number(end) } as SourceSplit;
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(op, { maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: P, maxLength: P }),
        fc.array(op, { maxLength: 40 }),
        fc.array(fc.boolean(), { minLength: P, maxLength: P }),
        async (before, adopt, after, lost) => {
          let c = await coordinator(P);
          const attempts = Array.from({ length: P }, () => 0);
          const finished = new Map<number, SourceSplit[]>();
          const handed: string[][] = Array.from({ length: P }, () => []);
          const consumed = new Map<number, string[]>();
          let snapshot: Uint8Array | undefined;
          const run = async (ops: readonly { kind: string; subtask?: number }[]): Promise<void> => {
            for (const o of ops) {
              const st = o.subtask ?? 0;
              if (o.kind === 'snapshot') snapshot = await c.checkpointCoordinator(-1);
              else if (o.kind === 'request') {
                if (finished.has(st)) continue;
                const a = c.requestSplit(st, attempts[st]!);
                if ('split' in a) handed[st]!.push(a.split.id);
              } else if (o.kind === 'finish') {
                if (finished.has(st)) continue;
                handed[st]!.push(...drain(c, st, attempts[st]!).map((x) => x.id));
                c.subtaskFinished(st, attempts[st]!);
                finished.set(st, increment(c, st));
                consumed.set(st, [...handed[st]!]);
              } else {
                attempts[st]!++;
                c.subtaskReset(st, attempts[st]!);
                finished.delete(st);
                consumed.delete(st);
                handed[st] = [];
              }
            }
          };
          await run(before);
          // The leader dies; the next one restores, then adopts the readers kept running.
          const restored = await coordinator(P);
          const next = attempts.map((a, i) => (finished.has(i) || adopt[i] ? a : a + 1));
          await restored.restore(snapshot, finished, new Map(next.map((a, i) => [i, a])));
          for (let st = 0; st < P; st++) {
            if (finished.has(st)) continue;
            if (adopt[st]) restored.adoptReader(st, attempts[st]!, handed[st]!.map(splitOf));
            else handed[st] = [];
            attempts[st] = next[st]!;
          }
          c = restored;
          snapshot = undefined;
          await run(after);
          // Every reader still running finishes.
          for (let st = 0; st < P; st++) {
            if (finished.has(st)) continue;
            handed[st]!.push(...drain(c, st, attempts[st]!).map((x) => x.id));
            c.subtaskFinished(st, attempts[st]!);
            finished.set(st, increment(c, st));
            consumed.set(st, [...handed[st]!]);
          }
          // Then partitions of some of them are lost (partition-delete): those readers rerun, with
          // nobody else left to take what they give back.
          const rerun = [...finished.keys()].filter((st) => lost[st]);
          for (const st of rerun) {
            attempts[st]!++;
            c.subtaskReset(st, attempts[st]!);
            consumed.delete(st);
          }
          for (const st of rerun)
            consumed.set(
              st,
              drain(c, st, attempts[st]!).map((x) => x.id),
            );
          expect([...consumed.values()].flat().sort()).toEqual(ALL);
        },
      ),
      { numRuns: 400 },
    );
  });
});
