import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ErrorCode, silentLogger } from '@rebound/core';
import { JobReadCapabilities, capabilityFile } from './job-read-capabilities.js';

let dataDir: string;
beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'rebound-sw-caps-'));
});
afterEach(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

describe('JobReadCapabilities', () => {
  it('records the first writer’s capability durably, refuses another one, and checks reads against it', async () => {
    const caps = await JobReadCapabilities.load(dataDir, silentLogger());
    await caps.admit('job-1', 'cap-a', 'p1');
    await caps.admit('job-1', 'cap-a', 'p2');
    await expect(caps.admit('job-1', 'cap-b', 'p3')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    await expect(caps.admit('job-2', '', 'p4')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    expect(() => caps.check('job-1', 'cap-a', 'p1')).not.toThrow();
    expect(() => caps.check('job-1', 'cap-b', 'p1')).toThrow(
      expect.objectContaining({ code: ErrorCode.PERMISSION_DENIED }),
    );
    expect(() => caps.check('job-1', '', 'p1')).toThrow(expect.objectContaining({ code: ErrorCode.PERMISSION_DENIED }));
    // A job without a capability has no partitions here: the read fails later, with PARTITION_NOT_FOUND.
    expect(() => caps.check('unknown', 'x', 'p')).not.toThrow();
    const file = capabilityFile(dataDir, 'job-1');
    expect(JSON.parse(await readFile(file, 'utf8'))).toMatchObject({ jobId: 'job-1', readCapability: 'cap-a' });
    expect((await stat(file)).mode & 0o077).toBe(0);
  });

  it('is loaded again by a new process on the same data directory, skipping unreadable files', async () => {
    const first = await JobReadCapabilities.load(dataDir, silentLogger());
    await first.admit('job-1', 'cap-a', 'p1');
    await first.admit('job-2', 'cap-b', 'p1');
    await writeFile(capabilityFile(dataDir, 'job-2'), '{"torn');
    const again = await JobReadCapabilities.load(dataDir, silentLogger());
    expect(again.jobs()).toEqual(['job-1']);
    await expect(again.admit('job-1', 'cap-other', 'p2')).rejects.toMatchObject({ code: ErrorCode.PERMISSION_DENIED });
    expect(() => again.check('job-1', 'cap-other', 'p1')).toThrow(
      expect.objectContaining({ code: ErrorCode.PERMISSION_DENIED }),
    );
  });

  it('lets exactly one of two concurrent first writers with different capabilities in', async () => {
    const caps = await JobReadCapabilities.load(dataDir, silentLogger());
    const results = await Promise.allSettled([caps.admit('job-1', 'cap-a', 'p1'), caps.admit('job-1', 'cap-b', 'p2')]);
    expect(results.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    const winner = results[0]!.status === 'fulfilled' ? 'cap-a' : 'cap-b';
    const loaded = await JobReadCapabilities.load(dataDir, silentLogger());
    expect(() => loaded.check('job-1', winner, 'p')).not.toThrow();
  });

  it('forgets a released job on disk too, so a later writer of the job records its own', async () => {
    const caps = await JobReadCapabilities.load(dataDir, silentLogger());
    await caps.admit('job-1', 'cap-a', 'p1');
    await caps.forget('job-1');
    expect((await JobReadCapabilities.load(dataDir, silentLogger())).jobs()).toEqual([]);
    await caps.admit('job-1', 'cap-b', 'p1');
    expect(caps.jobs()).toEqual(['job-1']);
  });

  it('refuses job ids that cannot name a directory', async () => {
    const caps = await JobReadCapabilities.load(dataDir, silentLogger());
    await expect(caps.admit('../x', 'cap', 'p')).rejects.toMatchObject({ code: ErrorCode.INVALID_ARGUMENT });
  });
});
