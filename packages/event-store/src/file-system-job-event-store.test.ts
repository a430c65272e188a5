import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, readdir, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Configuration, crc32c, decodeMessage, encodeMessage } from '@rebound/core';
import fc from 'fast-check';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobEventStoreCorruptError } from './errors.js';
import {
  FileSystemJobEventStore,
  type EventFileHandle,
  type FileSystemJobEventStoreOptions,
} from './file-system-job-event-store.js';
import { jobEventsDir, listEventFiles } from './format.js';
import { JOB_EVENT_TYPES, type JobEvent, type JobEventRecord } from './job-event.js';
import { JobEventLogReader } from './job-event-log-reader.js';
import { jobEventStoreSettings } from './options.js';
import { ManualClock } from './flush-timer.js';
import { SAMPLE_JOB_ID, finishedEvent, initializedEvent, resetEvent, sampleJobEvents } from './test-fixtures.js';

let haDir: string;
let dir: string;
let leaderEpoch: number;
let clock: ManualClock;

beforeEach(async () => {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-events-'));
  dir = jobEventsDir(haDir, SAMPLE_JOB_ID);
  leaderEpoch = 1;
  clock = new ManualClock();
});

afterEach(async () => {
  await rm(haDir, { recursive: true, force: true });
});

function newStore(epoch: number, extra: Partial<FileSystemJobEventStoreOptions> = {}): FileSystemJobEventStore {
  return new FileSystemJobEventStore({
    haDir,
    jobId: SAMPLE_JOB_ID,
    epoch,
    currentLeaderEpoch: () => leaderEpoch,
    jobMasterId: `jm-${epoch}`,
    clock,
    flushTimer: clock,
    ...extra,
  });
}

async function readAll(store: FileSystemJobEventStore): Promise<JobEventRecord[]> {
  const out: JobEventRecord[] = [];
  for await (const r of store) out.push(r);
  return out;
}

/** Reads the whole directory as a fresh leader would, with the report. */
async function replayDir() {
  const reader = new JobEventLogReader(dir, await listEventFiles(dir), { jobId: SAMPLE_JOB_ID });
  const events: JobEventRecord[] = [];
  for (;;) {
    const r = await reader.next();
    if (!r) break;
    events.push(r);
  }
  return { events, report: reader.report() };
}

async function writeAll(epoch: number, events: JobEvent[], cutAfter: number[] = []): Promise<FileSystemJobEventStore> {
  leaderEpoch = Math.max(leaderEpoch, epoch);
  const store = newStore(epoch);
  await store.start();
  events.forEach((e, i) => store.writeEvent(e, cutAfter.includes(i)));
  await store.stop(false);
  return store;
}

/** What an event written as `e` must decode to: the reference protobufjs round trip of core. */
function decodedForm(e: JobEvent): unknown {
  const typeName = JOB_EVENT_TYPES[e.type].message;
  return decodeMessage(typeName, encodeMessage(typeName, e.event));
}

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, errors: () => lines.filter((l) => (l.level as number) >= 50), lines };
}

describe('FileSystemJobEventStore', () => {
  it('round-trips every event type with every field', async () => {
    const events: JobEvent[] = [
      initializedEvent(0, 4),
      initializedEvent(1, 3, 4),
      finishedEvent(0, 2, {
        attempt: 3,
        snapshot: Buffer.from('enumerator-state'),
        shuffleSnapshot: Buffer.from('shuffle'),
        subpartitions: 128,
      }),
      finishedEvent(1, 0),
      resetEvent(1, [0, 1, 2]),
    ];
    clock.advance(5);
    await writeAll(1, events);
    const { events: back, report } = await replayDir();
    expect(back.map((r) => r.type)).toEqual(events.map((e) => e.type));
    for (let i = 0; i < events.length; i++) {
      expect(back[i]).toEqual({
        type: events[i]!.type,
        event: decodedForm(events[i]!),
        file: 'events.0',
        offset: expect.any(Number),
        epoch: 1,
        writtenAtMs: clock.now(),
      });
    }
    const f = back[2]!;
    if (f.type !== 'ExecutionVertexFinished') throw new Error('expected a finished event');
    expect(f.event.coordinator_snapshots[0]!.state.toString()).toBe('enumerator-state');
    expect(f.event.shuffle_master_snapshot.toString()).toBe('shuffle');
    expect(f.event.has_shuffle_master_snapshot).toBe(true);
    expect(f.event.io_metrics!.subpartition_bytes).toHaveLength(128);
    expect(f.event.location).toEqual({ task_manager_id: 'tm-00000002', address: '127.0.0.1:40002' });
    expect(report).toMatchObject({ events: 5, discardedBytes: 0, tornTails: [], staleFiles: [] });
    expect(report.eventsPerType).toEqual({
      ExecutionJobVertexInitialized: 2,
      ExecutionVertexFinished: 2,
      ExecutionVertexReset: 1,
    });
  });

  it('writes a new file per attempt and replays all attempts in order', async () => {
    await writeAll(1, [initializedEvent(0, 2), finishedEvent(0, 0)]);
    leaderEpoch = 2;
    const second = newStore(2);
    await second.start();
    // The second attempt replays the first one's events before it writes.
    expect((await readAll(second)).map((r) => r.event)).toHaveLength(2);
    second.writeEvent(finishedEvent(0, 1));
    second.writeEvent(initializedEvent(1, 1, 2));
    await second.stop(false);
    leaderEpoch = 3;
    const third = newStore(3);
    await third.start();
    const all = await readAll(third);
    expect(all.map((r) => [r.type, r.file, r.epoch])).toEqual([
      ['ExecutionJobVertexInitialized', 'events.0', 1],
      ['ExecutionVertexFinished', 'events.0', 1],
      ['ExecutionVertexFinished', 'events.1', 2],
      ['ExecutionJobVertexInitialized', 'events.1', 2],
    ]);
    // readEvent is a cursor over the same set.
    expect((await third.readEvent())?.type).toBe('ExecutionJobVertexInitialized');
    await third.stop(false);
    expect(await readdir(dir)).toEqual(['events.0', 'events.1']);
  });

  it('starts a new file after a cut block and flushes it at once', async () => {
    const store = newStore(1);
    await store.start();
    store.writeEvent(finishedEvent(0, 0));
    store.writeEvent(finishedEvent(0, 1), true);
    await store.idle();
    expect(store.stats()).toMatchObject({ fsyncs: 1, filesCreated: 1, pendingBytes: 0 });
    store.writeEvent(initializedEvent(1, 2, 2));
    await store.stop(false);
    const { events } = await replayDir();
    expect(events.map((r) => r.file)).toEqual(['events.0', 'events.0', 'events.1']);
  });

  it('cuts a torn tail at the last good record, at every byte offset of the last record', async () => {
    const events = sampleJobEvents(6, 4, 8);
    await writeAll(1, events);
    const path = join(dir, 'events.0');
    const original = await readFile(path);
    const { events: full } = await replayDir();
    const lastOffset = full[full.length - 1]!.offset;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: lastOffset, max: original.length - 1 }), async (cut) => {
        await writeFile(path, original.subarray(0, cut));
        const { events: back, report } = await replayDir();
        expect(back).toHaveLength(events.length - 1);
        expect(back.map((r) => r.offset)).toEqual(full.slice(0, -1).map((r) => r.offset));
        expect(report.discardedBytes).toBe(cut - lastOffset);
        expect(report.tornTails).toEqual(
          cut === lastOffset
            ? []
            : [{ file: 'events.0', offset: lastOffset, bytes: cut - lastOffset, reason: expect.any(String) }],
        );
        expect(report.cut?.expected ?? true).toBe(true);
      }),
      { numRuns: original.length - lastOffset, examples: [[lastOffset], [lastOffset + 1], [original.length - 1]] },
    );
  });

  it('stops at a torn tail of an earlier file: later files are not replayed, and the cut says what was dropped', async () => {
    await writeAll(1, [initializedEvent(0, 2), finishedEvent(0, 0), finishedEvent(0, 1)]);
    await writeAll(2, [initializedEvent(1, 1, 2)]);
    const first = join(dir, 'events.0');
    const size = (await stat(first)).size;
    const laterSize = (await stat(join(dir, 'events.1'))).size;
    await truncate(first, size - 3);
    const { events, report } = await replayDir();
    // The later file's event may rest on the lost record: replaying it would leave a hole.
    expect(events.map((r) => [r.file, r.type])).toEqual([
      ['events.0', 'ExecutionJobVertexInitialized'],
      ['events.0', 'ExecutionVertexFinished'],
    ]);
    expect(report.tornTails).toHaveLength(1);
    const tail = report.tornTails[0]!;
    expect(tail).toMatchObject({ file: 'events.0', reason: 'truncated-record' });
    // The tail starts at the third record: after the second one, before the end of the file.
    expect(tail.offset).toBeGreaterThan(events[1]!.offset);
    expect(tail.offset + tail.bytes).toBe(size - 3);
    expect(report.cut).toEqual({
      file: 'events.0',
      offset: tail.offset,
      reason: 'truncated-record',
      bytes: tail.bytes + laterSize,
      laterFiles: ['events.1'],
      expected: false,
    });
    expect(report.discardedBytes).toBe(tail.bytes + laterSize);
    expect(report.files.map((f) => f.status)).toEqual(['torn', 'discarded']);
  });

  it('calls a tear expected only when no record follows it: the newest file, or later files holding just a header', async () => {
    await writeAll(1, [initializedEvent(0, 2), finishedEvent(0, 0)]);
    const first = join(dir, 'events.0');
    const size = (await stat(first)).size;
    await truncate(first, size - 3);
    const alone = await replayDir();
    expect(alone.events).toHaveLength(1);
    expect(alone.report.cut).toMatchObject({
      file: 'events.0',
      laterFiles: [],
      expected: true,
      bytes: alone.report.tornTails[0]!.bytes,
    });

    // A later leader created its file, and died before its first record was durable.
    await writeAll(2, [initializedEvent(1, 1, 2)]);
    const later = join(dir, 'events.1');
    const { events: all } = await replayDir();
    expect(all).toHaveLength(1); // still cut at events.0
    const header = (await readFile(later)).subarray(0, 8);
    const headerEnd = 8 + header.readUInt16BE(6) + 4;
    await truncate(later, headerEnd);
    const { events, report } = await replayDir();
    expect(events).toHaveLength(1);
    expect(report.cut).toMatchObject({
      file: 'events.0',
      laterFiles: ['events.1'],
      expected: true,
      bytes: alone.report.tornTails[0]!.bytes + headerEnd,
    });
  });

  it('ends the replay at a flipped bit anywhere in a middle record: nothing after it, in that file or a later one', async () => {
    await writeAll(1, [initializedEvent(0, 3), finishedEvent(0, 0), finishedEvent(0, 1), finishedEvent(0, 2)]);
    await writeAll(2, [resetEvent(0, [1])]);
    const path = join(dir, 'events.0');
    const original = await readFile(path);
    const laterSize = (await stat(join(dir, 'events.1'))).size;
    const { events: full } = await replayDir();
    const middle = full[2]!;
    const middleEnd = full[3]!.offset;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: middle.offset * 8, max: middleEnd * 8 - 1 }), async (bit) => {
        const copy = Buffer.from(original);
        copy[bit >> 3]! ^= 1 << (bit & 7);
        await writeFile(path, copy);
        const { events, report } = await replayDir();
        // Replaying events.1's reset of subtask 1 without the lost finish of subtask 2 would be a history with a hole.
        expect(events.map((r) => `${r.file}@${r.offset}`)).toEqual(
          [full[0], full[1]].map((r) => `${r!.file}@${r!.offset}`),
        );
        expect(report.tornTails).toEqual([
          {
            file: 'events.0',
            offset: middle.offset,
            bytes: original.length - middle.offset,
            reason: expect.any(String),
          },
        ]);
        expect(report.cut).toMatchObject({
          file: 'events.0',
          offset: middle.offset,
          laterFiles: ['events.1'],
          expected: false,
        });
        expect(report.discardedBytes).toBe(original.length - middle.offset + laterSize);
      }),
      { numRuns: 120 },
    );
  });

  it('reports a checksummed record of unknown type or undecodable payload as corruption with file and offset', async () => {
    await writeAll(1, [initializedEvent(0, 2), finishedEvent(0, 0)]);
    const path = join(dir, 'events.0');
    const original = await readFile(path);
    const { events: full } = await replayDir();
    const at = full[1]!.offset;
    const rewrite = async (mutate: (b: Buffer) => void) => {
      const copy = Buffer.from(original);
      mutate(copy);
      const end = copy.length - 4;
      copy.writeUInt32BE(crc32c(copy, at, end), end);
      await writeFile(path, copy);
    };
    await rewrite((b) => (b[at] = 9));
    let err = await replayDir().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(JobEventStoreCorruptError);
    expect(err).toMatchObject({ code: 'EVENT_STORE_CORRUPT', file: 'events.0', offset: at });
    expect((err as Error).message).toContain(`${path} offset ${at}: unknown record type 9`);

    // A payload of garbage with a valid checksum.
    await rewrite((b) => b.fill(0xff, at + 16, b.length - 4));
    err = await replayDir().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'EVENT_STORE_CORRUPT', file: 'events.0', offset: at });
    expect((err as Error).message).toMatch(/undecodable ExecutionVertexFinished payload/);
  });

  it('rejects a file of another job, and does not read on after corruption', async () => {
    await writeAll(1, [initializedEvent(0, 2)]);
    await writeAll(2, [initializedEvent(1, 2)]);
    const reader = new JobEventLogReader(dir, await listEventFiles(dir), { jobId: 'f'.repeat(32) });
    await expect(reader.next()).rejects.toMatchObject({ code: 'EVENT_STORE_CORRUPT', file: 'events.0', offset: 0 });
    await expect(reader.next()).rejects.toMatchObject({ code: 'EVENT_STORE_CORRUPT' });
    expect(reader.report()).toMatchObject({
      events: 0,
      corruption: { file: 'events.0', offset: 0, message: expect.stringMatching(/belongs to job/) },
      files: [
        { file: 'events.0', status: 'corrupt' },
        { file: 'events.1', status: 'unread' },
      ],
    });
  });

  it('fences an old writer that resumes after a newer one started', async () => {
    const disabled: string[] = [];
    const old = newStore(1, { onDisabled: (state) => disabled.push(state) });
    await old.start();
    old.writeEvent(initializedEvent(0, 2));
    await old.flushNow();

    // The old JobMaster pauses; a new leader is elected, replays and writes.
    leaderEpoch = 2;
    const next = newStore(2);
    await next.start();
    expect((await readAll(next)).map((r) => r.epoch)).toEqual([1]);
    next.writeEvent(finishedEvent(0, 0));
    await next.flushNow();

    // The old one wakes up and carries on as if nothing happened.
    old.writeEvent(finishedEvent(0, 1));
    old.writeEvent(finishedEvent(0, 1), true);
    await old.flushNow();
    expect(old.status()).toMatchObject({ state: 'fenced', failure: { code: 'STALE_EPOCH' } });
    expect(disabled).toEqual(['fenced']);
    old.writeEvent(resetEvent(0, [0]));
    await old.stop(true); // must not delete the new leader's log
    await next.stop(false);

    const { events } = await replayDir();
    expect(events.map((r) => [r.type, r.epoch])).toEqual([
      ['ExecutionJobVertexInitialized', 1],
      ['ExecutionVertexFinished', 2],
    ]);
    expect(old.stats()).toMatchObject({ eventsWritten: 3, eventsDropped: 3 });
  });

  it('ignores a file an old epoch created after a newer epoch wrote (a fencing race)', async () => {
    await writeAll(2, [initializedEvent(0, 2)]);
    // A zombie of epoch 1 that passed its fencing check just before epoch 2 was elected.
    const zombie = newStore(1, { currentLeaderEpoch: () => 1 });
    await zombie.start();
    zombie.writeEvent(finishedEvent(0, 0));
    await zombie.stop(false);
    await writeAll(3, [finishedEvent(0, 1)]);
    const { events, report } = await replayDir();
    expect(events.map((r) => [r.file, r.epoch])).toEqual([
      ['events.0', 2],
      ['events.2', 3],
    ]);
    expect(report.staleFiles).toEqual([{ file: 'events.1', epoch: 1, newerEpoch: 2, bytes: expect.any(Number) }]);
  });

  it('never reuses a file name another writer created after its listing', async () => {
    const a = newStore(1);
    await a.start();
    leaderEpoch = 2;
    const b = newStore(2);
    await b.start(); // both computed events.0 as their next file
    b.writeEvent(initializedEvent(0, 1));
    await b.stop(false);
    leaderEpoch = 1; // let a write (as if it were still the leader)
    a.writeEvent(initializedEvent(9, 1));
    await a.stop(false);
    expect((await readdir(dir)).sort()).toEqual(['events.0', 'events.1']);
  });

  it('flushes when the buffer holds write-buffer.size bytes', async () => {
    const store = newStore(1, { writeBufferSize: 2048, flushIntervalMs: 60_000 });
    await store.start();
    let n = 0;
    while (store.stats().pendingBytes + 400 < 2048) {
      store.writeEvent(finishedEvent(0, n++, { subpartitions: 4 }));
    }
    await store.idle();
    expect(store.stats()).toMatchObject({ flushes: 0, fsyncs: 0 });
    expect(await store.isEmpty()).toBe(true);
    while (store.stats().flushes === 0) {
      store.writeEvent(finishedEvent(0, n++, { subpartitions: 4 }));
      await store.idle();
    }
    expect(store.stats()).toMatchObject({ flushes: 1, fsyncs: 1, pendingBytes: 0 });
    expect((await replayDir()).events).toHaveLength(n);
    await store.stop(false);
  });

  it('flushes every write-buffer.flush-interval', async () => {
    const store = newStore(1, { writeBufferSize: 1024 * 1024, flushIntervalMs: 1000 });
    await store.start();
    store.writeEvent(initializedEvent(0, 1));
    clock.advance(999);
    await store.idle();
    expect(store.stats().flushes).toBe(0);
    clock.advance(1);
    await store.idle();
    expect(store.stats()).toMatchObject({ flushes: 1, fsyncs: 1 });
    expect((await replayDir()).events).toHaveLength(1);
    // Nothing pending: no timer, no flush.
    expect(clock.pending()).toBe(0);
    clock.advance(5000);
    await store.idle();
    expect(store.stats().flushes).toBe(1);
    // The interval counts from the first event of the next batch.
    clock.advance(123);
    store.writeEvent(finishedEvent(0, 0));
    clock.advance(999);
    await store.idle();
    expect(store.stats().flushes).toBe(1);
    clock.advance(1);
    await store.idle();
    expect(store.stats().flushes).toBe(2);
    await store.stop(false);
  });

  it('flushes what precedes a write larger than the buffer, then writes it directly', async () => {
    const store = newStore(1, { writeBufferSize: 1024, flushIntervalMs: 60_000 });
    await store.start();
    store.writeEvent(initializedEvent(0, 1));
    store.writeEvent(finishedEvent(0, 0, { snapshot: Buffer.alloc(5000, 1) }));
    await store.idle();
    expect(store.stats()).toMatchObject({ flushes: 1, pendingBytes: 0 });
    const { events } = await replayDir();
    expect(events.map((r) => r.type)).toEqual(['ExecutionJobVertexInitialized', 'ExecutionVertexFinished']);
    await store.stop(false);
  });

  it('does not fsync with durability flush', async () => {
    const store = newStore(1, { durability: 'flush' });
    await store.start();
    store.writeEvent(initializedEvent(0, 1), true);
    store.writeEvent(initializedEvent(1, 1));
    await store.stop(false);
    // One flush (the cut block's, which the stop joined) wrote both files.
    expect(store.stats()).toMatchObject({ fsyncs: 0, flushes: 1, filesCreated: 2 });
  });

  it('on a write failure stops recording, logs one error and keeps the job running', async () => {
    const { logger, errors } = capturingLogger();
    const disabled: string[] = [];
    let writes = 0;
    const store = newStore(1, {
      logger,
      onDisabled: (state) => disabled.push(state),
      openExclusive: async (path) => {
        const fh = await open(path, 'wx');
        const handle: EventFileHandle = {
          writev: async (buffers) => {
            if (++writes >= 2)
              throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
            return fh.writev(buffers);
          },
          datasync: () => fh.datasync(),
          stat: () => fh.stat(),
          close: () => fh.close(),
        };
        return handle;
      },
    });
    await store.start();
    store.writeEvent(initializedEvent(0, 2));
    await store.flushNow();
    store.writeEvent(finishedEvent(0, 0));
    await store.flushNow(); // fails: must resolve, not reject
    expect(store.status()).toMatchObject({ state: 'failed', failure: { code: 'EVENT_STORE_FAILED' } });
    expect(() => store.writeEvent(finishedEvent(0, 1))).not.toThrow();
    await store.flushNow();
    await store.stop(false);
    expect(disabled).toEqual(['failed']);
    expect(errors()).toHaveLength(1);
    expect(errors()[0]!.msg).toMatch(/recording of job events is disabled/);
    expect(store.stats()).toMatchObject({ eventsWritten: 2, eventsDropped: 2 });
    // What was written before the failure is still a readable prefix.
    expect((await replayDir()).events.map((r) => r.type)).toEqual(['ExecutionJobVertexInitialized']);
  });

  it('fails (and does not recreate) when the directory is removed while writing', async () => {
    const { logger, errors } = capturingLogger();
    const store = newStore(1, { logger });
    await store.start();
    store.writeEvent(initializedEvent(0, 1));
    await store.flushNow();
    await rm(dir, { recursive: true });
    store.writeEvent(finishedEvent(0, 0)); // goes to the open, now nameless, file
    await store.flushNow();
    expect(store.status().state).toBe('failed');
    expect(errors()[0]!.msg).toMatch(/recording of job events is disabled/);
    await store.stop(false);
    expect(await store.isEmpty()).toBe(true);

    // A new file after a cut block in a removed directory fails too.
    const second = newStore(1);
    await second.start();
    second.writeEvent(initializedEvent(0, 1), true);
    await second.idle();
    await rm(dir, { recursive: true });
    second.writeEvent(initializedEvent(1, 1), true);
    await second.idle();
    expect(second.status().state).toBe('failed');
    await second.stop(false);
  });

  it('stop(true) clears the events, stop(false) keeps them', async () => {
    await writeAll(1, [initializedEvent(0, 1)]);
    const store = newStore(1);
    expect(await store.isEmpty()).toBe(false);
    await store.start();
    store.writeEvent(finishedEvent(0, 0));
    await store.stop(true);
    await expect(stat(dir)).rejects.toMatchObject({ code: 'ENOENT' });
    expect(await store.isEmpty()).toBe(true);
  });

  it('takes its settings from the job-event.store.* configuration keys', async () => {
    const config = Configuration.of({
      'job-event.store.write-buffer.size': '1 kb',
      'job-event.store.write-buffer.flush-interval': '250 ms',
      'job-event.store.durability': 'flush',
    });
    expect(jobEventStoreSettings(config)).toEqual({ writeBufferSize: 1024, flushIntervalMs: 250, durability: 'flush' });
    expect(jobEventStoreSettings(Configuration.of())).toEqual({
      writeBufferSize: 1024 * 1024,
      flushIntervalMs: 1000,
      durability: 'fsync',
    });
    const store = newStore(1, { config });
    await store.start();
    store.writeEvent(initializedEvent(0, 1));
    clock.advance(250);
    await store.idle();
    expect(store.stats()).toMatchObject({ flushes: 1, fsyncs: 0 });
    await store.stop(false);
  });

  it('rejects writes and reads before start', async () => {
    const store = newStore(1);
    expect(() => store.writeEvent(initializedEvent(0, 1))).toThrow(/start it/);
    await expect(store.readEvent()).rejects.toMatchObject({ code: 'ILLEGAL_STATE' });
  });

  it('handles records spanning read chunks', async () => {
    const events = sampleJobEvents(300, 50, 32);
    await writeAll(1, events);
    const reader = new JobEventLogReader(dir, await listEventFiles(dir), { jobId: SAMPLE_JOB_ID, readChunkBytes: 97 });
    let n = 0;
    for await (const r of reader) {
      expect(r.type).toBe(events[n]!.type);
      n++;
    }
    expect(n).toBe(300);
  });

  it('reads the same records whatever the window and read-ahead sizes, up to a torn tail', async () => {
    const events: JobEvent[] = [];
    for (let i = 0; i < 120; i++) {
      // Some records larger than a window, some larger than the read-ahead overlap.
      const snapshot = i % 17 === 5 ? Buffer.alloc(100_000 + i, i) : i % 7 === 3 ? Buffer.alloc(3_000, i) : undefined;
      events.push(finishedEvent(i % 3, i, { subpartitions: i % 40, ...(snapshot ? { snapshot } : {}) }));
    }
    await writeAll(1, events);
    const path = join(dir, 'events.0');
    const original = await readFile(path);
    await writeFile(path, original.subarray(0, original.length - 10));
    const readWith = async (readChunkBytes: number) => {
      const reader = new JobEventLogReader(dir, await listEventFiles(dir), { jobId: SAMPLE_JOB_ID, readChunkBytes });
      const out: JobEventRecord[] = [];
      for await (const r of reader) out.push(r);
      return { out, report: reader.report() };
    };
    const reference = await readWith(16 * 1024 * 1024);
    expect(reference.out).toHaveLength(events.length - 1);
    expect(reference.report.tornTails).toHaveLength(1);
    for (const chunk of [64, 97, 1000, 4096, 50_000, 200_000]) {
      const { out, report } = await readWith(chunk);
      // node:assert compares the large snapshot buffers as bytes (vitest's toEqual goes element by element).
      assert.deepStrictEqual(out, reference.out);
      expect(report).toEqual(reference.report);
    }
  });

  it('cuts a large file at a flipped bit, in any window', async () => {
    await writeAll(1, sampleJobEvents(2000, 64, 16));
    await writeAll(2, [resetEvent(0, [1])]);
    const path = join(dir, 'events.0');
    const original = await readFile(path);
    const { events: full } = await replayDir();
    for (const [i, bit] of [
      [1, 0],
      [1000, 8 * 40 + 3],
      [1999, 8 * 100],
    ] as const) {
      const copy = Buffer.from(original);
      copy[full[i]!.offset + (bit >> 3)]! ^= 1 << (bit & 7);
      await writeFile(path, copy);
      for (const readChunkBytes of [64 * 1024, 1024 * 1024]) {
        const reader = new JobEventLogReader(dir, await listEventFiles(dir), { jobId: SAMPLE_JOB_ID, readChunkBytes });
        const offsets: string[] = [];
        for await (const r of reader) offsets.push(`${r.file}@${r.offset}`);
        expect(offsets).toEqual(full.slice(0, i).map((r) => `${r.file}@${r.offset}`));
        expect(reader.report().tornTails).toEqual([
          {
            file: 'events.0',
            offset: full[i]!.offset,
            bytes: original.length - full[i]!.offset,
            reason: 'checksum-mismatch',
          },
        ]);
      }
    }
  });

  it('reads a header-less or zero-filled newest file as an expected torn tail', async () => {
    await writeAll(1, [initializedEvent(0, 1)]);
    for (const [content, bytes] of [
      [Buffer.alloc(0), 0],
      [Buffer.alloc(100), 100],
      [Buffer.from('RBJ'), 3],
    ] as const) {
      await writeFile(join(dir, 'events.1'), content);
      const { events, report } = await replayDir();
      expect(events).toHaveLength(1);
      expect(report.tornTails.map((t) => [t.file, t.offset, t.bytes])).toEqual([['events.1', 0, bytes]]);
      expect(report.cut).toMatchObject({ file: 'events.1', offset: 0, bytes, laterFiles: [], expected: true });
    }
    // Such files after it hold no records: the first one ends the replay, and the cut is still expected.
    await writeFile(join(dir, 'events.1'), Buffer.alloc(0));
    await writeFile(join(dir, 'events.2'), Buffer.alloc(100));
    await writeFile(join(dir, 'events.3'), Buffer.from('RBJ'));
    const { events, report } = await replayDir();
    expect(events).toHaveLength(1);
    expect(report.tornTails.map((t) => [t.file, t.offset, t.bytes])).toEqual([['events.1', 0, 0]]);
    expect(report.cut).toMatchObject({
      file: 'events.1',
      bytes: 103,
      laterFiles: ['events.2', 'events.3'],
      expected: true,
    });
  });
});
