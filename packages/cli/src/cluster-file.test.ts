import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type ClusterFile,
  nextProcessId,
  parseClusterFile,
  readClusterFile,
  serializeClusterFile,
  tryReadClusterFile,
  upsertProcess,
  withClusterFileLock,
  writeClusterFile,
} from './cluster-file.js';
import { ClusterNotFoundError } from './errors.js';

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const sample: ClusterFile = {
  haDir: '/w/ha',
  processes: [
    { id: 'jm-1', role: 'jobmaster', pid: 100, address: '127.0.0.1:1', logFile: '/w/logs/jm-1.log', startedAtMs: 1 },
    {
      id: 'tm-2',
      role: 'taskmanager',
      pid: 101,
      address: '127.0.0.1:2',
      logFile: '/w/logs/tm-2.log',
      dataDir: '/w/data/tm-2',
      slots: 2,
      startedAtMs: 2,
    },
    {
      id: 'sw-1',
      role: 'shuffle-worker',
      pid: 102,
      address: '127.0.0.1:3',
      logFile: '/w/logs/sw-1.log',
      dataDir: '/w/data/sw-1',
      startedAtMs: 3,
      metricsUrl: 'http://127.0.0.1:9250',
    },
  ],
  config: { 'heartbeat.interval': '200 ms' },
  slots: 2,
};

describe('cluster.json', () => {
  it('round-trips', () => {
    expect(parseClusterFile(serializeClusterFile(sample), 'x')).toEqual(sample);
  });

  it('rejects broken files with the path and the reason', () => {
    expect(() => parseClusterFile('{', '/w/cluster.json')).toThrow(
      '/w/cluster.json is not a valid cluster file (not JSON)',
    );
    expect(() => parseClusterFile('{"processes":[]}', 'p')).toThrow(/haDir is missing/);
    expect(() =>
      parseClusterFile('{"haDir":"h","processes":[{"id":"a","role":"chef","pid":1,"address":"","logFile":""}]}', 'p'),
    ).toThrow(/role/);
    expect(() =>
      parseClusterFile(
        '{"haDir":"h","processes":[{"id":"a","role":"jobmaster","pid":-1,"address":"","logFile":""}]}',
        'p',
      ),
    ).toThrow(/pid/);
  });

  it('numbers new processes after the highest id of their role', () => {
    expect(nextProcessId(sample, 'jobmaster')).toBe('jm-2');
    expect(nextProcessId(sample, 'taskmanager')).toBe('tm-3');
    expect(nextProcessId({ processes: [] }, 'taskmanager')).toBe('tm-1');
    expect(nextProcessId(sample, 'shuffle-worker')).toBe('sw-2');
    expect(nextProcessId({ processes: [] }, 'shuffle-worker')).toBe('sw-1');
  });

  it('replaces a restarted process', () => {
    const next = upsertProcess(sample, { ...sample.processes[0]!, pid: 200 });
    expect(next.processes.map((p) => [p.id, p.pid])).toEqual([
      ['tm-2', 101],
      ['sw-1', 102],
      ['jm-1', 200],
    ]);
  });

  it('is written and read from the workdir; a missing one is a clear error', async () => {
    const dir = tempDir('rebound-cf-');
    expect(await tryReadClusterFile(dir)).toBeUndefined();
    await expect(readClusterFile(dir)).rejects.toThrow(ClusterNotFoundError);
    await expect(readClusterFile(dir)).rejects.toThrow(
      /no cluster in .* \(no cluster.json there\); start one with 'rebound local up/,
    );
    await writeClusterFile(dir, sample);
    expect(await readClusterFile(dir)).toEqual(sample);
  });

  it('serializes concurrent read-modify-write through the lock', async () => {
    const dir = tempDir('rebound-cf-');
    await writeClusterFile(dir, { ...sample, processes: [] });
    await Promise.all(
      [1, 2, 3, 4].map((i) =>
        withClusterFileLock(
          dir,
          async () => {
            const f = await readClusterFile(dir);
            await writeClusterFile(dir, upsertProcess(f, { ...sample.processes[0]!, id: `jm-${i}` }));
          },
          { pollMs: 5 },
        ),
      ),
    );
    expect((await readClusterFile(dir)).processes.map((p) => p.id).sort()).toEqual(['jm-1', 'jm-2', 'jm-3', 'jm-4']);
  });
});
