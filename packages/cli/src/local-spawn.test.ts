import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { daemonArgs, lastWords, waitForReady, type SpawnedDaemon } from './local-spawn.js';

const tempDirs: string[] = [];
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fakeDaemon(dir: string, role: 'jobmaster' | 'taskmanager' = 'taskmanager'): SpawnedDaemon {
  return {
    spec: { workdir: dir, role, id: 'tm-1', haDir: join(dir, 'ha'), config: {}, slots: 3 },
    child: {} as ChildProcess,
    pid: process.pid,
    logFile: join(dir, 'tm-1.log'),
    outFile: join(dir, 'tm-1.out'),
    dataDir: join(dir, 'data', 'tm-1'),
    exit: undefined,
    spawnError: undefined,
  };
}

describe('local daemons', () => {
  it('pass HA dir, id, log file, slots, data dir and every -D to the daemon', () => {
    const args = daemonArgs(
      { workdir: '/w', role: 'taskmanager', id: 'tm-2', haDir: '/w/ha', config: { 'rpc.timeout': '3 s' }, slots: 4 },
      '/w/logs/tm-2.log',
      '/w/data/tm-2',
    );
    expect(args).toEqual([
      'taskmanager',
      '--ha-dir',
      '/w/ha',
      '--id',
      'tm-2',
      '--log-file',
      '/w/logs/tm-2.log',
      '--slots',
      '4',
      '--data-dir',
      '/w/data/tm-2',
      '-D',
      'rpc.timeout=3 s',
    ]);
    expect(
      daemonArgs({ workdir: '/w', role: 'jobmaster', id: 'jm-1', haDir: '/w/ha', config: {} }, '/l', undefined),
    ).toEqual(['jobmaster', '--ha-dir', '/w/ha', '--id', 'jm-1', '--log-file', '/l']);
    expect(
      daemonArgs(
        { workdir: '/w', role: 'shuffle-worker', id: 'sw-1', haDir: '/w/ha', config: { 'shuffle.type': 'remote' } },
        '/l',
        '/w/data/sw-1',
      ),
    ).toEqual([
      'shuffle-worker',
      '--ha-dir',
      '/w/ha',
      '--id',
      'sw-1',
      '--log-file',
      '/l',
      '--data-dir',
      '/w/data/sw-1',
      '-D',
      'shuffle.type=remote',
    ]);
  });

  it('are ready once their ready line appears on stdout', async () => {
    const dir = tempDir('rebound-spawn-');
    const d = fakeDaemon(dir);
    writeFileSync(d.outFile, '{"event":"ready","role":"taskmanager","id":"tm-1","address":"127.0.0.1:5","pid":1}\n');
    const p = await waitForReady(d, Date.now() + 5_000, 5);
    expect(p).toMatchObject({
      id: 'tm-1',
      role: 'taskmanager',
      address: '127.0.0.1:5',
      pid: process.pid,
      slots: 3,
      dataDir: d.dataDir,
    });
  });

  it('that die before ready are reported with their last words', async () => {
    const dir = tempDir('rebound-spawn-');
    const d = fakeDaemon(dir);
    writeFileSync(d.outFile, '');
    writeFileSync(
      d.logFile,
      '{"level":30,"msg":"starting"}\nrebound: HA directory /x holds neither leader.json nor epochs/\n',
    );
    d.exit = { code: 1, signal: null };
    await expect(waitForReady(d, Date.now() + 5_000, 5)).rejects.toThrow(
      /taskmanager tm-1 exited with code 1 before it was ready: HA directory \/x holds neither leader.json nor epochs\/ \(log: .*tm-1.log\)/,
    );
  });

  it('that are not ready by the deadline are reported', async () => {
    const dir = tempDir('rebound-spawn-');
    await expect(waitForReady(fakeDaemon(dir), Date.now() - 1, 5)).rejects.toThrow(
      /was not ready in time; see its log/,
    );
  });

  it('last words prefer the rebound: line, then the last log message', async () => {
    const dir = tempDir('rebound-spawn-');
    const log = join(dir, 'x.log');
    writeFileSync(log, '{"msg":"failed to start","err":{"message":"boom"}}\n');
    expect(await lastWords(log)).toBe('failed to start: boom');
    expect(await lastWords(join(dir, 'missing.log'))).toBe('no output');
  });
});
