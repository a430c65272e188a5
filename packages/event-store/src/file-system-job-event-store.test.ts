import { open, readdir, rm, stat } from 'node:fs/promises';
import { Configuration, decodeMessage, encodeMessage } from '@rebound/core';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventFileHandle, FileSystemJobEventStore } from './file-system-job-event-store.js';
import {
  clock,
  createJobEventsDir,
  dir,
  newStore,
  removeJobEventsDir,
  replayDir,
  writeAll,
} from './file-system-job-event-store.test-util.js';
import { JOB_EVENT_TYPES, type JobEvent, type JobEventRecord } from './job-event.js';
import { jobEventStoreSettings } from './options.js';
import { finishedEvent, initializedEvent, resetEvent } from './test-fixtures.js';

let leaderEpoch: number;

beforeEach(async () => {
  await createJobEventsDir({ get: () => leaderEpoch, set: (epoch) => void (leaderEpoch = epoch) });
});

afterEach(async () => {
  await removeJobEventsDir();
});

async function readAll(store: FileSystemJobEventStore): Promise<JobEventRecord[]> {
  const out: JobEventRecord[] = [];
  for await (const r of store) out.push(r);
  return out;
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

  it('keeps every buffered event intact while earlier ones are still being written', async () => {
    // Written buffers are reused for new events: a write that is slow to complete must still
    // write what was buffered when it started, however much is appended meanwhile.
    let entered!: () => void;
    const writing = new Promise<void>((r) => (entered = r));
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const store = newStore(1, {
      writeBufferSize: 2048,
      flushIntervalMs: 60_000,
      openExclusive: async (path) => {
        const fh = await open(path, 'wx');
        const handle: EventFileHandle = {
          writev: async (buffers) => {
            entered();
            await released;
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
    const events: JobEvent[] = [];
    for (let s = 0; events.length < 400; s++) events.push(finishedEvent(0, s, { subpartitions: 4 }));
    for (const e of events.slice(0, 40)) store.writeEvent(e);
    await writing;
    // Many buffers' worth while the first write waits.
    for (const e of events.slice(40)) store.writeEvent(e);
    release();
    await store.stop(false);
    expect(store.stats()).toMatchObject({ eventsWritten: 400, eventsDropped: 0 });
    const { events: replayed, report } = await replayDir();
    expect(report.tornTails).toEqual([]);
    expect(replayed.map((r) => r.event)).toEqual(events.map(decodedForm));
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
});
