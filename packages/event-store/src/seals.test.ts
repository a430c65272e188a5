import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { formatSummary, dumpJobEvents } from './dump.js';
import { FileSystemJobEventStore, type EventFileHandle, type OpenExclusive } from './file-system-job-event-store.js';
import { jobEventsDir, listEventFiles } from './format.js';
import { collectSeals } from './seals.js';
import type { JobEventRecord } from './job-event.js';
import { JobEventManager } from './job-event-manager.js';
import { SAMPLE_JOB_ID, finishedEvent, initializedEvent } from './test-fixtures.js';

/*
 * The sealed-file fence (seals.ts): a JobMaster paused between its epoch check and its write
 * appends to its open file after a newer leader replayed the log; no later reader may take
 * those bytes for history.
 */

let haDir: string;
let dir: string;
/** The epoch of the leader, as the HA service would answer it. */
let leaderEpoch = 1;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-seals-'));
  dir = jobEventsDir(haDir, SAMPLE_JOB_ID);
  leaderEpoch = 1;
});

afterEach(async () => {
  await rm(haDir, { recursive: true, force: true });
});

/** A gate in front of a store's writes: once closed, the next write waits at it, past the epoch check. */
class WriteGate {
  private closed = false;
  private release: (() => void) | undefined;
  private arrived: (() => void) | undefined;
  readonly waiting = new Promise<void>((resolve) => (this.arrived = resolve));

  close(): void {
    this.closed = true;
  }

  open(): void {
    this.closed = false;
    this.release?.();
  }

  readonly openExclusive: OpenExclusive = async (path) => {
    const fh = await open(path, 'wx');
    const handle: EventFileHandle = {
      writev: async (buffers) => {
        if (this.closed) {
          const released = new Promise<void>((resolve) => (this.release = resolve));
          this.arrived?.();
          await released;
        }
        return fh.writev(buffers);
      },
      datasync: () => fh.datasync(),
      stat: () => fh.stat(),
      close: () => fh.close(),
    };
    return handle;
  };
}

function leader(epoch: number, gate?: WriteGate): JobEventManager {
  return new JobEventManager(
    new FileSystemJobEventStore({
      haDir,
      jobId: SAMPLE_JOB_ID,
      epoch,
      currentLeaderEpoch: () => leaderEpoch,
      flushIntervalMs: 60_000,
      ...(gate ? { openExclusive: gate.openExclusive } : {}),
    }),
  );
}

/** Takes the job over as a new leader: replays what is there and seals it, as the recovery handler does. */
async function takeOver(
  epoch: number,
): Promise<{ manager: JobEventManager; replayed: JobEventRecord[]; sealedBytes: number }> {
  leaderEpoch = epoch;
  const manager = leader(epoch);
  await manager.start();
  const replayed: JobEventRecord[] = [];
  const result = await manager.replay((r) => void replayed.push(r));
  expect(result.ok).toBe(true);
  await manager.seal(result.report);
  return { manager, replayed, sealedBytes: result.report.sealedBytes };
}

const subtasks = (records: JobEventRecord[]) =>
  records.map((r) =>
    r.type === 'ExecutionVertexFinished'
      ? `${r.event.vertex_id}#${r.event.subtask}`
      : r.type === 'ExecutionJobVertexInitialized'
        ? r.event.vertex_id
        : r.type,
  );

describe('sealed-file fence', () => {
  it('ignores what a leader paused between its epoch check and its write appends after a newer leader replayed', async () => {
    const gate = new WriteGate();
    const old = leader(1, gate);
    await old.start();
    old.writeEvent(initializedEvent(0, 2));
    old.writeEvent(finishedEvent(0, 0));
    await old.flush();

    // The old leader flushes once more: its epoch check passes (it still leads), then it stalls.
    gate.close();
    old.writeEvent(finishedEvent(0, 1));
    const stalled = old.flush();
    await gate.waiting;

    const second = await takeOver(2);
    expect(subtasks(second.replayed)).toEqual(['vertex-0', 'vertex-0#0']);
    second.manager.writeEvent(finishedEvent(0, 1, { attempt: 1 }));
    await second.manager.flush();

    // The old leader wakes up and finishes its write: the bytes really land in its file.
    const before = (await stat(join(dir, 'events.0'))).size;
    gate.open();
    await stalled;
    expect((await stat(join(dir, 'events.0'))).size).toBeGreaterThan(before);
    await old.stop(false);

    const third = await takeOver(3);
    // Only the history the second leader acted on, and what it wrote: subtask 1 in attempt 1.
    expect(subtasks(third.replayed)).toEqual(['vertex-0', 'vertex-0#0', 'vertex-0#1']);
    const last = third.replayed[2]!;
    expect(last.type === 'ExecutionVertexFinished' && last.event.attempt).toBe(1);
    expect(third.sealedBytes).toBe((await stat(join(dir, 'events.0'))).size - before);

    const dump = await dumpJobEvents(haDir, SAMPLE_JOB_ID);
    // Both later leaders sealed events.0 at the same length; the newest seal is named.
    expect(dump.summary.sealedTails).toEqual([
      { file: 'events.0', length: before, bytes: third.sealedBytes, sealedBy: 'events.2' },
    ]);
    expect(formatSummary(dump.summary)).toContain(`sealed:    events.0 after ${before} bytes by events.2`);
    await second.manager.stop(false);
    await third.manager.stop(false);
  });

  it('keeps what a leader wrote after a damaged record: the seal ends the old file where its replay stopped', async () => {
    const first = leader(1);
    await first.start();
    first.writeEvent(initializedEvent(0, 3));
    first.writeEvent(finishedEvent(0, 0));
    first.writeEvent(finishedEvent(0, 1));
    await first.stop(false);
    // Damage the last record (a bit flip no crash explains is still just a cut for the reader).
    const path = join(dir, 'events.0');
    const bytes = await readFile(path);
    bytes[bytes.length - 10] ^= 0xff;
    await writeFile(path, bytes);

    const second = await takeOver(2);
    expect(subtasks(second.replayed)).toEqual(['vertex-0', 'vertex-0#0']);
    second.manager.writeEvent(finishedEvent(0, 1, { attempt: 1 }));
    second.manager.writeEvent(finishedEvent(0, 2));
    await second.manager.stop(false);

    // Without the seal the damaged record would cut the log again, dropping the second leader's work.
    leaderEpoch = 3;
    const third = leader(3);
    await third.start();
    const replayed: JobEventRecord[] = [];
    const result = await third.replay((r) => void replayed.push(r));
    expect(result.ok).toBe(true);
    expect(result.report.cut).toBeUndefined();
    expect(subtasks(replayed)).toEqual(['vertex-0', 'vertex-0#0', 'vertex-0#1', 'vertex-0#2']);
    await third.stop(false);
  });

  it('does not count the seal of a leader that a newer one sealed out', async () => {
    const gate = new WriteGate();
    const old = leader(1, gate);
    await old.start();
    old.writeEvent(initializedEvent(0, 2));
    await old.flush();
    gate.close();
    old.writeEvent(finishedEvent(0, 0));
    const stalled = old.flush();
    await gate.waiting;

    // Leader 2 replays (without the stalled event) but is slow to write its seal; meanwhile the
    // stalled write lands, and leader 3 lists and replays the log with it.
    leaderEpoch = 2;
    const second = leader(2);
    await second.start();
    const secondReplay = await second.replay(() => {});
    const lengthSecondReplayed = (await stat(join(dir, 'events.0'))).size;
    gate.open();
    await stalled;
    await old.stop(false);

    const third = leader(3);
    leaderEpoch = 3;
    await third.start();
    const thirdReplayed: JobEventRecord[] = [];
    const thirdReplay = await third.replay((r) => void thirdReplayed.push(r));
    expect(subtasks(thirdReplayed)).toEqual(['vertex-0', 'vertex-0#0']);
    // Now leader 2 writes its seal (events.1, it did not know it was deposed); leader 3 writes its own (events.2).
    leaderEpoch = 2;
    await second.seal(secondReplay.report);
    // Leader 2's seal is on disk: its file seals events.0 where leader 2 replayed it.
    const beforeThirdSeals = await listEventFiles(dir);
    expect(beforeThirdSeals.map((f) => f.name)).toEqual(['events.0', 'events.1']);
    expect(lengthSecondReplayed).toBeLessThan((await stat(join(dir, 'events.0'))).size);
    expect((await collectSeals(dir, beforeThirdSeals)).get(0)).toEqual({
      length: lengthSecondReplayed,
      sealedBy: 'events.1',
    });
    leaderEpoch = 3;
    await third.seal(thirdReplay.report);
    await second.stop(false);
    await third.stop(false);

    // A fourth leader reads the history leader 3 acted on, including the event leader 2 would have cut.
    const fourth = await takeOver(4);
    expect(subtasks(fourth.replayed)).toEqual(['vertex-0', 'vertex-0#0']);
    await fourth.manager.stop(false);
  });
});
