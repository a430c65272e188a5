import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReboundError } from '@rebound/core';
import type { SplitEnumeratorContext } from '../source.js';
import {
  computeTextFileSplits,
  listInputFiles,
  readTextSplit,
  TextFileSource,
  type TextFileSplit,
} from './text-file-source.js';

const root = mkdtempSync(join(tmpdir(), 'rebound-textfiles-'));
let fileNo = 0;
function writeTemp(content: string | Buffer): string {
  const p = join(root, `f${fileNo++}.txt`);
  writeFileSync(p, content);
  return p;
}

/** What "the lines of a file" means: split on \n, no empty line after a final \n, \r\n ends. */
function expectedLines(content: string): string[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

async function readAll(split: TextFileSplit, opts = {}): Promise<string[][]> {
  const batches: string[][] = [];
  for await (const b of readTextSplit(split, opts)) batches.push(b);
  return batches;
}

async function linesOfAllSplits(
  path: string,
  size: number,
  splitSize: number,
  readBufferBytes: number,
): Promise<string[]> {
  const splits = computeTextFileSplits([{ path, size }], splitSize);
  const out: string[] = [];
  for (const s of splits) for (const b of await readAll(s, { readBufferBytes, batchSize: 3 })) out.push(...b);
  return out;
}

function recordingContext(parallelism = 2) {
  const assigned: Array<[string, number]> = [];
  const splits: TextFileSplit[] = [];
  const noMore: number[] = [];
  const ctx: SplitEnumeratorContext<TextFileSplit> = {
    parallelism,
    assignSplit: (s, subtask) => {
      assigned.push([s.id, subtask]);
      splits.push(s);
    },
    signalNoMoreSplits: (subtask) => noMore.push(subtask),
  };
  return { ctx, assigned, splits, noMore };
}

describe('text file splits', () => {
  it('every line is read exactly once, whatever the split size and read buffer (property)', async () => {
    const line = fc.string({ unit: fc.constantFrom('a', 'b', 'é', '日', '😀', ' ', '\r'), maxLength: 12 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(line, { maxLength: 30 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 17 }),
        async (lines, finalNewline, splitSize, readBufferBytes) => {
          const content = lines.join('\n') + (finalNewline && lines.length > 0 ? '\n' : '');
          const bytes = Buffer.from(content, 'utf8');
          const path = writeTemp(bytes);
          const got = await linesOfAllSplits(path, bytes.length, splitSize, readBufferBytes);
          expect(got).toEqual(expectedLines(content));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('a line belongs to the split it starts in', async () => {
    const path = writeTemp('aaaa\nbb\ncccccc\nd');
    // bytes: aaaa\n = 0..4, bb\n = 5..7, cccccc\n = 8..14, d = 15
    const splits = computeTextFileSplits([{ path, size: 16 }], 5);
    expect(splits.map((s) => [s.start, s.end])).toEqual([
      [0, 5],
      [5, 10],
      [10, 15],
      [15, 16],
    ]);
    const lines = [];
    for (const s of splits) lines.push((await readAll(s)).flat());
    expect(lines).toEqual([['aaaa'], ['bb', 'cccccc'], [], ['d']]);
  });

  it('batches lines and, with a record delay, emits one line per batch', async () => {
    const content = Array.from({ length: 2500 }, (_, i) => `line ${i}`).join('\n');
    const path = writeTemp(content);
    const [split] = computeTextFileSplits([{ path, size: Buffer.byteLength(content) }], 1 << 20);
    expect((await readAll(split!)).map((b) => b.length)).toEqual([1000, 1000, 500]);

    const small = writeTemp('a\nb\nc\n');
    const [s2] = computeTextFileSplits([{ path: small, size: 6 }], 100);
    expect(await readAll(s2!, { recordDelayMs: 1 })).toEqual([['a'], ['b'], ['c']]);
  });

  it('lists a directory sorted, skipping hidden and _-prefixed names and subdirectories', async () => {
    const dir = join(root, 'listing');
    mkdirSync(join(dir, 'sub'), { recursive: true });
    for (const n of ['b.txt', 'a.txt', '.crc', '_SUCCESS', 'c.txt'])
      writeFileSync(join(dir, n), n === 'c.txt' ? '' : 'x\n');
    writeFileSync(join(dir, 'sub', 'd.txt'), 'x\n');
    const files = await listInputFiles(dir);
    expect(files.map((f) => f.path.slice(dir.length + 1))).toEqual(['a.txt', 'b.txt', 'c.txt']);
    // the empty file has no split
    const source = new TextFileSource(dir);
    expect(source.estimateSplits()).toBe(2);
  });

  it('names a missing input path', async () => {
    const source = new TextFileSource('/nonexistent/input-dir');
    const { ctx } = recordingContext();
    const err = await Promise.resolve(source.createEnumerator(ctx)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReboundError);
    expect(err).toMatchObject({ code: 'JOB_INVALID' });
    expect((err as Error).message).toMatch(/input path '\/nonexistent\/input-dir' does not exist/);
    expect(() => source.estimateSplits()).toThrow(/input path '\/nonexistent\/input-dir'/);
  });
});

describe('text file enumerator', () => {
  function dirWith(n: number): string {
    const dir = join(root, `enum-${fileNo++}`);
    mkdirSync(dir);
    for (let i = 0; i < n; i++) writeFileSync(join(dir, `part-${i}`), `line ${i}\n`);
    return dir;
  }

  it('hands out each split once, then signals no more splits', async () => {
    const source = new TextFileSource(dirWith(3));
    expect(source.supportsBatchSnapshot).toBe(true);
    const { ctx, assigned, noMore } = recordingContext();
    const e = await source.createEnumerator(ctx);
    expect(e.supportsBatchSnapshot).toBe(true);
    e.handleSplitRequest(0);
    e.handleSplitRequest(1);
    e.handleSplitRequest(0);
    e.handleSplitRequest(1);
    expect(assigned.map(([id, st]) => [id.replace(/.*\//, ''), st])).toEqual([
      ['part-0:0-7', 0],
      ['part-1:0-7', 1],
      ['part-2:0-7', 0],
    ]);
    expect(noMore).toEqual([1]);
  });

  it('snapshots the unassigned splits as JSON and restores them; addSplitsBack re-offers them', async () => {
    const source = new TextFileSource(dirWith(4));
    const first = recordingContext();
    const e = await source.createEnumerator(first.ctx);
    e.handleSplitRequest(0);
    e.handleSplitRequest(1);
    const state = JSON.parse(JSON.stringify(await e.snapshotState(-1))) as { splits: TextFileSplit[] };
    expect(state.splits.map((s) => s.id.replace(/.*\//, ''))).toEqual(['part-2:0-7', 'part-3:0-7']);

    // a restored enumerator continues where the snapshot left off...
    const second = recordingContext();
    const restored = await source.restoreEnumerator(second.ctx, state);
    // ...and subtask 1 of before failed: its split comes back and is handed out first
    restored.addSplitsBack([first.splits[1]!], 1);
    for (let i = 0; i < 4; i++) restored.handleSplitRequest(i % 2);
    expect(second.assigned.map(([id]) => id.replace(/.*\//, ''))).toEqual(['part-1:0-7', 'part-2:0-7', 'part-3:0-7']);
    expect(second.noMore).toEqual([1]);
    expect(await restored.snapshotState(-1)).toEqual({ splits: [], total: 4 });
  });

  it('rejects a malformed state', () => {
    const source = new TextFileSource(root);
    expect(() => source.restoreEnumerator(recordingContext().ctx, { nope: 1 } as never)).toThrow(
      /enumerator state must be/,
    );
  });
});
