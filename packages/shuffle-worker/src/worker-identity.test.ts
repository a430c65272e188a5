import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '@rebound/core';
import { WORKER_ID_FILE, keepShuffleWorkerId, resolveShuffleWorkerId } from './worker-identity.js';

/** Resolves the id and records it, as a start that passed its checks does. */
async function start(dataDir: string, requested?: string): Promise<string> {
  const identity = await resolveShuffleWorkerId(dataDir, requested);
  await keepShuffleWorkerId(dataDir, identity);
  return identity.id;
}

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-sw-id-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('resolveShuffleWorkerId', () => {
  it('claims a new data directory only when the start keeps the id', async () => {
    const refused = await resolveShuffleWorkerId(dataDir, 'sw-1');
    expect(refused).toEqual({ id: 'sw-1', isNew: true });
    // The start was refused after this: the directory is still free for another id.
    expect(await start(dataDir, 'sw-2')).toBe('sw-2');
    expect(await resolveShuffleWorkerId(dataDir)).toEqual({ id: 'sw-2', isNew: false });
  });

  it('keeps the id a data directory was first used with', async () => {
    expect(await start(dataDir, 'sw-1')).toBe('sw-1');
    expect(await start(dataDir)).toBe('sw-1');
    expect(await start(dataDir, 'sw-1')).toBe('sw-1');
    await expect(resolveShuffleWorkerId(dataDir, 'sw-2')).rejects.toMatchObject({
      code: ErrorCode.CONFIG_INVALID,
      message: expect.stringContaining('belongs to shuffle worker sw-1, not sw-2'),
    });
  });

  it('gives a new data directory a fresh id without --id, and refuses ids that are not names', async () => {
    const id = await start(dataDir);
    expect(id).toMatch(/^sw-[0-9a-f]{8}$/);
    expect(await start(dataDir)).toBe(id);
    await writeFile(join(dataDir, WORKER_ID_FILE), '');
    await expect(resolveShuffleWorkerId(dataDir, '../x')).rejects.toMatchObject({ code: ErrorCode.CONFIG_INVALID });
  });
});
