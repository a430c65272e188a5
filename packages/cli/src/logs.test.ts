import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from './io.js';
import { logs, selectLines } from './logs.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

async function workdir(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'rebound-logs-'));
  dirs.push(dir);
  await mkdir(join(dir, 'logs'));
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, 'logs', name), text);
  return dir;
}

const line = (time: number, level: number, msg: string, extra: Record<string, unknown> = {}): string =>
  `${JSON.stringify({ level, time, pid: 1, name: 'x', processId: 'p', msg, ...extra })}\n`;

function capture(cwd: string): { io: CliIo; out: () => string } {
  let out = '';
  return {
    io: { stdout: { write: (t: string) => (out += t) }, stderr: { write: () => true }, env: { NO_COLOR: '1' }, cwd },
    out: () => out,
  };
}

describe('rebound logs', () => {
  it('filters by level and job, keeps non-JSON lines (a crash on stderr)', () => {
    const text =
      line(1, 20, 'debug') +
      line(2, 30, 'info', { jobId: 'j1' }) +
      'TypeError: boom\n' +
      line(3, 50, 'error', { jobId: 'j2' });
    expect(selectLines(text, 'jm-1', 30).map((e) => e.text.slice(0, 20))).toEqual([
      line(2, 30, 'info', { jobId: 'j1' }).slice(0, 20),
      'TypeError: boom',
      line(3, 50, 'error').slice(0, 20),
    ]);
    expect(selectLines(text, 'jm-1', 30, 'j2')).toHaveLength(1);
  });

  it('pretty-prints every process merged by time; --json prints the lines untouched', async () => {
    const jm =
      line(1_000, 30, 'leader elected', { component: 'JobMasterProcess', epoch: 1 }) + line(3_000, 40, 'lease lost');
    const tm = line(2_000, 30, 'task deployed', { component: 'TaskExecutor', subtask: 3 });
    const dir = await workdir({ 'jm-1.log': jm, 'tm-1.log': tm, 'jm-1.out': 'not a log\n' });
    const pretty = capture(dir);
    expect(await logs({ workdir: '.', follow: false, level: 'info', json: false }, pretty.io)).toBe(0);
    const lines = pretty.out().trim().split('\n');
    expect(lines.map((l) => l.replace(/\[[\d:.]+\]/, '[T]'))).toEqual([
      'jm-1  | [T] INFO: JobMasterProcess: leader elected {"epoch":1}',
      'tm-1  | [T] INFO: TaskExecutor: task deployed {"subtask":3}',
      'jm-1  | [T] WARN: lease lost',
    ]);
    const raw = capture(dir);
    await logs({ workdir: '.', id: 'jm-1', follow: false, level: 'trace', json: true }, raw.io);
    expect(raw.out()).toBe(jm);
  });

  it('names the processes that have logs when the id is wrong', async () => {
    const dir = await workdir({ 'jm-1.log': '' });
    await expect(
      logs({ workdir: dir, id: 'tm-9', follow: false, level: 'info', json: false }, capture('/').io),
    ).rejects.toThrow(/no log of 'tm-9' .*: jm-1/);
  });

  it('--follow prints lines appended later, until stopped', async () => {
    const dir = await workdir({ 'tm-1.log': line(1, 30, 'first') });
    const c = capture(dir);
    const stop = new AbortController();
    const following = logs({ workdir: '.', id: 'tm-1', follow: true, level: 'info', json: false }, c.io, stop.signal);
    const deadline = Date.now() + 10_000;
    while (!c.out().includes('first') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    // Half a line first (a daemon in the middle of a write): printed only once complete.
    const second = line(2, 30, 'second');
    await appendFile(join(dir, 'logs', 'tm-1.log'), second.slice(0, 10));
    await appendFile(join(dir, 'logs', 'tm-1.log'), second.slice(10));
    while (!c.out().includes('second') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    expect(await following).toBe(0);
    expect(
      c
        .out()
        .trim()
        .split('\n')
        .map((l) => l.replace(/\[[\d:.]+\] /, '')),
    ).toEqual(['INFO: first', 'INFO: second']);
  });
});
