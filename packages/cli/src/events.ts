import { stat } from 'node:fs/promises';
import { ErrorCode, ReboundError, isJobId } from '@rebound/core';
import { HaPaths } from '@rebound/ha';
import { eventsHaDir } from './info.js';
import { printLines, type CliIo } from './io.js';
import type { EventsOptions } from './options.js';

/** Bytes in events (coordinator snapshots) print as base64 in `--json`, not as index maps. */
function jsonReplacer(_key: string, value: unknown): unknown {
  if (value instanceof Uint8Array) return { base64: Buffer.from(value).toString('base64') };
  if (value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'Buffer' && Array.isArray((value as { data?: unknown }).data)) {
    return { base64: Buffer.from((value as { data: number[] }).data).toString('base64') };
  }
  return value;
}

/**
 * `rebound events JOBID`: reads the job's JobEventStore files straight from the HA directory, so
 * it works with no JobMaster running (e.g. to look at what a dead leader left behind).
 */
export async function runEvents(opts: EventsOptions, io: CliIo): Promise<number> {
  const jobId = opts.jobId.trim().toLowerCase();
  if (!isJobId(jobId)) {
    throw new ReboundError(ErrorCode.JOB_NOT_FOUND, `'${opts.jobId}' is not a job id (32 hex characters); run 'rebound list' to see the jobs`);
  }
  const haDir = await eventsHaDir(opts, io);
  const jobDir = HaPaths.jobDir(haDir, jobId);
  if (!(await stat(jobDir).then((s) => s.isDirectory(), () => false))) {
    throw new ReboundError(ErrorCode.JOB_NOT_FOUND, `no job ${jobId} in ${haDir}; run 'rebound list' to see the jobs`);
  }
  const { dumpJobEvents, formatEventLine, formatSummary } = await import('@rebound/event-store');
  const dump = await dumpJobEvents(haDir, jobId);
  if (opts.json) {
    io.stdout.write(`${JSON.stringify({ jobId, ...dump }, jsonReplacer)}\n`);
    return 0;
  }
  printLines(io.stdout, [
    `events of job ${jobId} (${dump.summary.directory})`,
    ...(dump.events.length === 0 ? ['no events recorded (job recovery disabled, or no vertex finished yet)'] : dump.events.map((r) => formatEventLine(r))),
    '',
    formatSummary(dump.summary),
  ]);
  return 0;
}
