import { mkdtemp, rm, stat, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { dumpJobEvents, formatEventLine, formatSummary, toJsonValue } from './dump.js';
import { FileSystemJobEventStore } from './file-system-job-event-store.js';
import { jobEventsDir } from './format.js';
import { JobEventManager } from './job-event-manager.js';
import { ManualClock } from './flush-timer.js';
import { SAMPLE_JOB_ID, finishedEvent, initializedEvent, resetEvent } from './test-fixtures.js';

let haDir: string;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-events-dump-'));
});

afterEach(async () => {
  await rm(haDir, { recursive: true, force: true });
});

/** Records events the way a JobMaster of `epoch` does: through a manager and a real store. */
async function runAttempt(epoch: number, clock: ManualClock, write: (m: JobEventManager) => void): Promise<void> {
  const store = new FileSystemJobEventStore({
    haDir,
    jobId: SAMPLE_JOB_ID,
    epoch,
    currentLeaderEpoch: () => epoch,
    jobMasterId: `jobmaster-${epoch}`,
    clock,
  });
  const manager = new JobEventManager(store, clock);
  await manager.start();
  write(manager);
  await manager.stop(false);
}

describe('dumpJobEvents', () => {
  it("dumps a job's directory written by two JobMaster attempts, with file, offset and time", async () => {
    const clock = new ManualClock(Date.UTC(2025, 0, 2, 3, 4, 5));
    await runAttempt(1, clock, (m) => {
      m.writeEvent(initializedEvent(0, 2));
      clock.advance(1500);
      m.writeEvent(finishedEvent(0, 0, { snapshot: Buffer.from('enum'), shuffleSnapshot: Buffer.from('sm') }));
      m.writeEvent(finishedEvent(0, 1), true);
      m.writeEvent(initializedEvent(1, 1, 2));
    });
    await runAttempt(2, clock, (m) => {
      m.writeEvent(resetEvent(0, [1]));
      m.writeEvent(finishedEvent(0, 1, { attempt: 1 }));
    });
    // The second attempt died mid-write.
    const last = join(jobEventsDir(haDir, SAMPLE_JOB_ID), 'events.2');
    const size = (await stat(last)).size;
    await truncate(last, size - 5);

    const { events, summary } = await dumpJobEvents(haDir, SAMPLE_JOB_ID);
    expect(events.map((e) => [e.file, e.type, e.epoch])).toEqual([
      ['events.0', 'ExecutionJobVertexInitialized', 1],
      ['events.0', 'ExecutionVertexFinished', 1],
      ['events.0', 'ExecutionVertexFinished', 1],
      ['events.1', 'ExecutionJobVertexInitialized', 1],
      ['events.2', 'ExecutionVertexReset', 2],
    ]);
    expect(events[0]!.offset).toBeGreaterThan(0);
    expect(events[1]!.writtenAtMs - events[0]!.writtenAtMs).toBe(1500);
    expect(summary).toMatchObject({
      events: 5,
      eventsPerType: { ExecutionJobVertexInitialized: 2, ExecutionVertexFinished: 2, ExecutionVertexReset: 1 },
      files: 3,
      tornTails: [
        { file: 'events.2', offset: expect.any(Number), bytes: expect.any(Number), reason: 'truncated-record' },
      ],
    });
    expect(summary.discardedBytes).toBe(size - 5 - summary.tornTails[0]!.offset);
    expect(summary.bytes).toBe(summary.fileDetails.reduce((a, f) => a + f.bytes, 0));
    expect(summary.fileDetails.map((f) => [f.file, f.epoch, f.jobMasterId, f.status])).toEqual([
      ['events.0', 1, 'jobmaster-1', 'complete'],
      ['events.1', 1, 'jobmaster-1', 'complete'],
      ['events.2', 2, 'jobmaster-2', 'torn'],
    ]);

    const line = formatEventLine(events[1]!);
    expect(line).toMatch(
      /^events\.0:\d+\s+2025-01-02T03:04:06\.500Z  epoch 1  ExecutionVertexFinished\s+vertex-0#0 attempt 0, on tm-00000000 \(127\.0\.0\.1:40000\)/,
    );
    expect(line).toContain('coordinator snapshots of source-0 (4 B)');
    expect(line).toContain('shuffle-master snapshot (2 B)');
    // The remote shuffle's snapshot says where it placed partitions.
    const placements = {
      v: 1,
      partitions: [
        { id: { vertex_id: 'map', subtask: 0 }, workers: [{ worker_id: 'sw-1' }, { worker_id: 'sw-2' }] },
        { id: { vertex_id: 'map', subtask: 1 }, workers: [{ worker_id: 'sw-2' }] },
      ],
      released: ['k'],
    };
    const remote = structuredClone(events[1]!);
    if (remote.type !== 'ExecutionVertexFinished') throw new Error('expected a finished event');
    remote.event.shuffle_master_snapshot = Buffer.from(JSON.stringify(placements));
    remote.event.shuffle_master_snapshot_incremental = true;
    expect(formatEventLine(remote)).toMatch(
      /incremental shuffle-master snapshot \(\d+ B: 2 partitions on sw-1 1, sw-2 2, 1 released\)/,
    );
    expect(formatEventLine(events[3]!)).toContain('vertex-1 parallelism 1, inputs vertex-0 [0-1]');
    expect(formatEventLine(events[4]!)).toContain('ExecutionVertexReset');
    const text = formatSummary(summary);
    expect(text).toContain(
      'events:    5 (ExecutionJobVertexInitialized 2, ExecutionVertexFinished 2, ExecutionVertexReset 1)',
    );
    expect(text).toContain('files:     3');
    expect(text).toMatch(/torn tail: events\.2 from offset \d+, \d+ bytes discarded \(truncated-record\)/);

    const json = JSON.parse(JSON.stringify(toJsonValue({ events, summary }))) as {
      events: Array<{ event: { coordinator_snapshots: Array<{ state: string }> } }>;
    };
    expect(json.events[1]!.event.coordinator_snapshots[0]!.state).toBe(Buffer.from('enum').toString('base64'));
  });

  it('reports a job without events', async () => {
    const { events, summary } = await dumpJobEvents(haDir, SAMPLE_JOB_ID);
    expect(events).toEqual([]);
    expect(summary).toMatchObject({ files: 0, events: 0, bytes: 0, discardedBytes: 0 });
    expect(formatSummary(summary)).toContain('no job events in');
  });
});
