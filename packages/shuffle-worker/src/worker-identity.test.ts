import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '@rebound/core';
import { WORKER_ID_FILE, resolveShuffleWorkerId } from './worker-identity.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-sw-id-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('resolveShuffleWorkerId', () => {
  it('keeps the id a data directory was first used with', async () => {
    expect(await resolveShuffleWorkerId(dataDir, 'sw-1')).toBe('sw-1');
    expect(await resolveShuffleWorkerId(dataDir)).toBe('sw-1');
    expect(await resolveShuffleWorkerId(dataDir, 'sw-1')).toBe('sw-1');
    await expect(resolveShuffleWorkerId(dataDir, 'sw-2')).rejects.toMatchObject({
      code: ErrorCode.CONFIG_INVALID,
      message: expect.stringContaining('belongs to shuffle worker sw-1, not sw-2'),
    });
  });

  it('gives a new data directory a fresh id without --id, and refuses ids that are not names', async () => {
    const id = await resolveShuffleWorkerId(dataDir);
    expect(id).toMatch(/^sw-[0-9a-f]{8}$/);
    expect(await resolveShuffleWorkerId(dataDir)).toBe(id);
    await writeFile(join(dataDir, WORKER_ID_FILE), '');
    await expect(resolveShuffleWorkerId(dataDir, '../x')).rejects.toMatchObject({ code: ErrorCode.CONFIG_INVALID });
  });
});
