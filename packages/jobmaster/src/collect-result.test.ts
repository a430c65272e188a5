import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { JobGraph__Output, JobResultChunk } from '@rebound/core';
import { collectDirOf, readResultChunks, withCollectDir } from './collect-result.js';

let dir: string;
let files: string[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rebound-collect-'));
  files = [join(dir, 'part-00000'), join(dir, 'part-00001'), join(dir, 'part-00002')];
  await writeFile(files[0]!, '{"a":1}\n{"a":2}\n{"a":3}\n');
  await writeFile(files[1]!, '');
  await writeFile(files[2]!, `"${'x'.repeat(40)}"\n"y"\n`);
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function all(from: { fileIndex: number; offset: number }, max = 10): Promise<JobResultChunk[]> {
  const out: JobResultChunk[] = [];
  for await (const c of readResultChunks('job', files, from, max)) out.push(c);
  return out;
}

const text = (chunks: JobResultChunk[]): string =>
  chunks.map((c) => Buffer.from(c.data as Uint8Array).toString('utf8')).join('');

describe('readResultChunks', () => {
  it('sends whole lines (a longer line whole), positions that chain, every file once', async () => {
    const chunks = await all({ fileIndex: 0, offset: 0 });
    for (const c of chunks) {
      const t = Buffer.from(c.data as Uint8Array).toString('utf8');
      if (t !== '') expect(t.endsWith('\n')).toBe(true);
    }
    expect(text(chunks)).toBe(`{"a":1}\n{"a":2}\n{"a":3}\n"${'x'.repeat(40)}"\n"y"\n`);
    expect(chunks.filter((c) => c.end_of_file).map((c) => c.file_index)).toEqual([0, 1, 2]);
    expect(chunks[1]).toMatchObject({ file_index: 0, offset: 8 });
  });

  it('resumes at a line boundary with exactly the rest', async () => {
    expect(text(await all({ fileIndex: 0, offset: 16 }))).toBe(`{"a":3}\n"${'x'.repeat(40)}"\n"y"\n`);
    expect(text(await all({ fileIndex: 2, offset: 43 }))).toBe('"y"\n');
    expect(await all({ fileIndex: 3, offset: 0 })).toEqual([]);
  });

  it('refuses a position that is not a line boundary of the result, with one clear error', async () => {
    await expect(all({ fileIndex: 0, offset: 3 })).rejects.toThrow('offset 3 of file 0 is not at a line boundary');
    await expect(all({ fileIndex: 0, offset: 999 })).rejects.toThrow('offset 999 is past the end of file 0');
    await expect(all({ fileIndex: 4, offset: 0 })).rejects.toThrow('file index 4 is not in 0..3');
    await expect(all({ fileIndex: -1, offset: 0 })).rejects.toThrow('file index -1');
    await expect(all({ fileIndex: 0, offset: -5 })).rejects.toThrow('offset -5 is negative');
    await expect(all({ fileIndex: 3, offset: 1 })).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
  });
});

describe('withCollectDir', () => {
  it("points a collect() sink at the job's directory in storageDir, other sinks unchanged", () => {
    const graph = {
      job_id: 'j1',
      vertices: [
        { id: 'v1', sink: { operator_id: 'op-2', path: '/out', collect: false } },
        { id: 'v2', sink: { operator_id: 'op-4', path: '', collect: true } },
      ],
    } as unknown as JobGraph__Output;
    const out = withCollectDir(graph, '/storage');
    expect(out.vertices.map((v) => v.sink?.path)).toEqual(['/out', collectDirOf('/storage', 'j1')]);
    expect(collectDirOf('/storage', 'j1')).toBe('/storage/jobs/j1/collect');
  });
});
