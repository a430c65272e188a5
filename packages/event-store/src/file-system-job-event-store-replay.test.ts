import assert from 'node:assert/strict';
import { readFile, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32c } from '@rebound/core';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { JobEventStoreCorruptError } from './errors.js';
import {
  createJobEventsDir,
  dir,
  removeJobEventsDir,
  replayDir,
  writeAll,
} from './file-system-job-event-store.test-util.js';
import { listEventFiles } from './format.js';
import type { JobEvent, JobEventRecord } from './job-event.js';
import { JobEventLogReader } from './job-event-log-reader.js';
import { SAMPLE_JOB_ID, finishedEvent, initializedEvent, resetEvent, sampleJobEvents } from './test-fixtures.js';

beforeEach(async () => {
  await createJobEventsDir();
});

afterEach(async () => {
  await removeJobEventsDir();
});

describe('FileSystemJobEventStore', () => {
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
