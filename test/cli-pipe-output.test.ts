import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSystemJobEventStore, JobEventManager } from '@rebound/event-store';
import { SAMPLE_JOB_ID, sampleJobEvents } from '@rebound/event-store/testing';

const EVENTS = 20_000;

/** Runs `rebound ARGS` with stdout to a pipe that is not read for `stallMs`, then counts its lines. */
function linesThroughSlowPipe(args: string[], stallMs: number): Promise<{ lines: number; code: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/rebound.js', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let lines = 0;
    child.stdout.pause();
    setTimeout(() => child.stdout.resume(), stallMs);
    child.stdout.on('data', (chunk: Buffer) => {
      for (const b of chunk) if (b === 10) lines++;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ lines, code }));
  });
}

/*
 * A pipe takes a process's output asynchronously; a command that exits at once drops what the
 * reader has not taken yet. `rebound events JOB | wc -l` counted a few hundred of 100,006 lines.
 */
describe('output to a pipe', () => {
  let haDir: string;
  beforeAll(async () => {
    haDir = await mkdtemp(join(tmpdir(), 'rebound-pipe-'));
    const events = new JobEventManager(
      new FileSystemJobEventStore({ haDir, jobId: SAMPLE_JOB_ID, epoch: 1, currentLeaderEpoch: () => 1 }),
    );
    await events.start();
    for (const e of sampleJobEvents(EVENTS)) events.writeEvent(e);
    await events.flush();
    await events.stop(false);
  });
  afterAll(() => rm(haDir, { recursive: true, force: true }));

  it('rebound events hands every line to a reader that is slow to start', async () => {
    const { lines, code } = await linesThroughSlowPipe(['events', SAMPLE_JOB_ID, '--ha-dir', haDir], 500);
    expect(code).toBe(0);
    // One line per event, and a few more for the summary.
    expect(lines).toBeGreaterThanOrEqual(EVENTS);
  });
});
