import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { crc32c } from '@rebound/core';
import { FileSystemJobEventStore } from './file-system-job-event-store.js';
import { jobEventsDir } from './format.js';
import type { JobEventRecord } from './job-event.js';
import { JobEventManager } from './job-event-manager.js';
import { ManualClock } from './flush-timer.js';
import { SAMPLE_JOB_ID, finishedEvent, initializedEvent, resetEvent } from './test-fixtures.js';

let haDir: string;
let clock: ManualClock;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-events-manager-'));
  clock = new ManualClock();
});

afterEach(async () => {
  await rm(haDir, { recursive: true, force: true });
});

function newManager(epoch = 1): JobEventManager {
  const store = new FileSystemJobEventStore({
    haDir,
    jobId: SAMPLE_JOB_ID,
    epoch,
    currentLeaderEpoch: () => epoch,
    clock,
    flushTimer: clock,
  });
  return new JobEventManager(store, clock);
}

describe('JobEventManager', () => {
  it('start and stop are idempotent', async () => {
    const manager = newManager();
    await manager.start();
    await manager.start();
    expect(manager.isRunning()).toBe(true);
    await manager.stop(false);
    await manager.stop(false);
    expect(manager.isRunning()).toBe(false);
  });

  it('rejects writing and replaying before start and after stop', async () => {
    const manager = newManager();
    expect(() => manager.writeEvent(initializedEvent(0, 1))).toThrow(/not started/);
    await expect(manager.replay(() => {})).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
    await manager.start();
    await manager.stop(false);
    expect(() => manager.writeEvent(initializedEvent(0, 1))).toThrow(/not started/);
  });

  it('replays what earlier attempts wrote, with the handler hooks in order, after a restart', async () => {
    const first = newManager(1);
    await first.start();
    expect(await first.hasJobEvents()).toBe(false);
    first.writeEvent(initializedEvent(0, 2));
    first.writeEvent(finishedEvent(0, 0), true);
    first.writeEvent(resetEvent(0, [0]));
    await first.stop(false);

    const second = newManager(2);
    await second.start();
    expect(await second.hasJobEvents()).toBe(true);
    const calls: string[] = [];
    const result = await second.replay({
      startReplay: () => void calls.push('start'),
      replayOneEvent: (r: JobEventRecord) => void calls.push(r.type),
      finalizeReplay: () => void calls.push('finalize'),
    });
    expect(calls).toEqual([
      'start',
      'ExecutionJobVertexInitialized',
      'ExecutionVertexFinished',
      'ExecutionVertexReset',
      'finalize',
    ]);
    expect(result).toMatchObject({
      ok: true,
      events: 3,
      report: { discardedBytes: 0, files: [{ file: 'events.0' }, { file: 'events.1' }] },
    });
    // Events written after start are not part of this attempt's replay.
    second.writeEvent(finishedEvent(0, 1));
    expect((await second.replay(() => {})).events).toBe(3);
    await second.stop(false);

    // The same store restarted sees the second attempt's file too.
    await second.start();
    expect((await second.replay(() => {})).events).toBe(4);
    await second.stop(true);
    expect(await second.hasJobEvents()).toBe(false);
  });

  it('returns a typed failure for a corrupt log, and success with the discarded bytes for a torn tail', async () => {
    const writer = newManager(1);
    await writer.start();
    writer.writeEvent(initializedEvent(0, 2));
    writer.writeEvent(finishedEvent(0, 0));
    await writer.stop(false);
    const path = join(jobEventsDir(haDir, SAMPLE_JOB_ID), 'events.0');
    const original = await readFile(path);

    await writeFile(path, original.subarray(0, original.length - 10));
    const torn = newManager(2);
    await torn.start();
    const tornResult = await torn.replay(() => {});
    expect(tornResult).toMatchObject({
      ok: true,
      events: 1,
      report: { tornTails: [{ file: 'events.0', bytes: expect.any(Number) }] },
    });
    expect(tornResult.report.discardedBytes).toBe(tornResult.report.tornTails[0]!.bytes);
    await torn.stop(false);

    // Turn the second record into an unknown type with a valid checksum.
    const corrupt = Buffer.from(original);
    const secondRecord = tornResult.report.tornTails[0]!.offset;
    corrupt[secondRecord] = 42;
    corrupt.writeUInt32BE(crc32c(corrupt, secondRecord, corrupt.length - 4), corrupt.length - 4);
    await writeFile(path, corrupt);
    const manager = newManager(3);
    await manager.start();
    const seen: string[] = [];
    const result = await manager.replay((r) => void seen.push(r.type));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.failure.kind).toBe('corrupt');
    expect(result.failure.error).toMatchObject({ code: 'EVENT_STORE_CORRUPT', file: 'events.0', offset: secondRecord });
    expect(result.events).toBe(1);
    expect(result.report.corruption).toMatchObject({ file: 'events.0', offset: secondRecord });
    expect(seen).toEqual(['ExecutionJobVertexInitialized']);
    // The log is kept for inspection: a failed replay does not wipe it (unlike Flink's).
    expect(await manager.hasJobEvents()).toBe(true);
    await manager.stop(false);
  });

  it('reports a handler failure with the event it failed on', async () => {
    const writer = newManager(1);
    await writer.start();
    writer.writeEvent(initializedEvent(0, 2));
    writer.writeEvent(finishedEvent(0, 0));
    await writer.stop(false);
    const manager = newManager(2);
    await manager.start();
    const result = await manager.replay((r) => {
      if (r.type === 'ExecutionVertexFinished') throw new Error('no such vertex');
    });
    expect(result).toMatchObject({
      ok: false,
      events: 1,
      failure: { kind: 'handler', record: { type: 'ExecutionVertexFinished' } },
    });
    await manager.stop(false);
  });
});
