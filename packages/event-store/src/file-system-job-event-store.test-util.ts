import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileSystemJobEventStore, type FileSystemJobEventStoreOptions } from './file-system-job-event-store.js';
import { jobEventsDir, listEventFiles } from './format.js';
import type { JobEvent, JobEventRecord } from './job-event.js';
import { JobEventLogReader } from './job-event-log-reader.js';
import { ManualClock } from './flush-timer.js';
import { SAMPLE_JOB_ID } from './test-fixtures.js';

/** The epoch the HA services would name as the leader's, which stores fence against: tests move it by hand. */
export interface LeaderEpoch {
  get(): number;
  set(epoch: number): void;
}

let haDir: string;
export let dir: string;
export let clock: ManualClock;
let leader: LeaderEpoch;

/**
 * A fresh HA directory, clock and leader epoch (1) for the next test. Each file's hooks call it
 * and removeJobEventsDir: with `isolate: false` (vitest.config.ts) a worker evaluates this module
 * once for every file that imports it, so hooks registered here would run for the first file only.
 */
export async function createJobEventsDir(leaderEpoch: LeaderEpoch = ownLeaderEpoch()): Promise<void> {
  haDir = await mkdtemp(join(tmpdir(), 'rebound-events-'));
  dir = jobEventsDir(haDir, SAMPLE_JOB_ID);
  leader = leaderEpoch;
  leader.set(1);
  clock = new ManualClock();
}

export async function removeJobEventsDir(): Promise<void> {
  await rm(haDir, { recursive: true, force: true });
}

function ownLeaderEpoch(): LeaderEpoch {
  let epoch = 1;
  return { get: () => epoch, set: (e) => void (epoch = e) };
}

export function newStore(epoch: number, extra: Partial<FileSystemJobEventStoreOptions> = {}): FileSystemJobEventStore {
  return new FileSystemJobEventStore({
    haDir,
    jobId: SAMPLE_JOB_ID,
    epoch,
    currentLeaderEpoch: () => leader.get(),
    jobMasterId: `jm-${epoch}`,
    clock,
    flushTimer: clock,
    ...extra,
  });
}

/** Reads the whole directory as a fresh leader would, with the report. */
export async function replayDir() {
  const reader = new JobEventLogReader(dir, await listEventFiles(dir), { jobId: SAMPLE_JOB_ID });
  const events: JobEventRecord[] = [];
  for (;;) {
    const r = await reader.next();
    if (!r) break;
    events.push(r);
  }
  return { events, report: reader.report() };
}

export async function writeAll(
  epoch: number,
  events: JobEvent[],
  cutAfter: number[] = [],
): Promise<FileSystemJobEventStore> {
  leader.set(Math.max(leader.get(), epoch));
  const store = newStore(epoch);
  await store.start();
  events.forEach((e, i) => store.writeEvent(e, cutAfter.includes(i)));
  await store.stop(false);
  return store;
}
