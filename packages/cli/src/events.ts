import { readdir, stat } from 'node:fs/promises';
import { isJobId, JobNotFoundError } from '@rebound/core';
import { HaPaths, type StoredJobSummary } from '@rebound/ha';
import { eventsHaDir } from './info.js';
import { pickJobId } from './job-id.js';
import { printLines, type CliIo } from './io.js';
import type { EventsOptions } from './options.js';

/** Bytes in events (coordinator snapshots) print as base64 in `--json`, not as index maps. */
function jsonReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') };
  if (
    value !== null &&
    typeof value === 'object' &&
    (value as { type?: unknown }).type === 'Buffer' &&
    Array.isArray((value as { data?: unknown }).data)
  ) {
    return { base64: Buffer.from((value as { data: number[] }).data).toString('base64') };
  }
  return value;
}

/**
 * `rebound events JOBID`: reads the job's JobEventStore files straight from the HA directory, so
 * it works with no JobMaster running (e.g. to look at what a dead leader left behind).
 */
export async function runEvents(opts: EventsOptions, io: CliIo): Promise<number> {
  const { storageDir: haDir, jobs } = await eventsHaDir(opts, io);
  let stored: StoredJobSummary[] | undefined;
  const storedJobs = async (): Promise<StoredJobSummary[]> => (stored ??= await jobs().catch(() => []));
  // Prefixes and names as for `status`, from the job directories and the job store: no JobMaster
  // needs to run.
  const jobId = await pickJobId(
    opts.jobId,
    async () => (await readdir(HaPaths.jobsDir(haDir)).catch(() => [])).filter((n) => isJobId(n)),
    async () =>
      (await storedJobs())
        .filter((j) => !j.damage)
        .map((j) => ({ id: j.jobId, name: j.name, submittedAtMs: j.submittedAtMs })),
  );
  const jobDir = HaPaths.jobDir(haDir, jobId);
  if (
    !(await stat(jobDir).then(
      (s) => s.isDirectory(),
      () => false,
    ))
  ) {
    throw new JobNotFoundError(jobId, `no job ${jobId} in ${haDir}; run 'rebound list' to see the jobs`);
  }
  const { dumpJobEvents, formatEventLine, formatSummary } = await import('@rebound/event-store');
  const dump = await dumpJobEvents(haDir, jobId);
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ jobId, ...dump }, jsonReplacer)}\n`);
    return 0;
  }
  printLines(io.stdout, [
    `events of job ${jobId} (${dump.summary.directory})`,
    ...(dump.events.length === 0
      ? [await noEventsLine(jobId, storedJobs)]
      : dump.events.map((r) => formatEventLine(r))),
    '',
    formatSummary(dump.summary),
  ]);
  return 0;
}

/** Why a job's log is empty: a job that ended has its log removed; others have not recorded yet. */
async function noEventsLine(jobId: string, jobs: () => Promise<StoredJobSummary[]>): Promise<string> {
  const ended = (await jobs()).find((j) => j.jobId === jobId)?.status?.state;
  return ended
    ? `no events: the job ended ${ended}, and a job's event log is removed when it ends (nothing is left to recover)`
    : 'no events recorded (job recovery disabled, or no vertex finished yet)';
}
