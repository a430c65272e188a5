import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, isTerminalJobState, sleep, type JobSummary__Output } from '@rebound/core';
import { HaPaths } from '@rebound/ha';
import type { FaultPlan, JobFileDamage } from './faults.js';
import { listJobs } from './observe.js';
import { Prng } from './prng.js';
import type { RunContext } from './run-context.js';
import { parseTaskEvents } from './task-log.js';

/**
 * The faults of a hostile or careless user rather than of a failing machine: a damaged job
 * directory here, poison jobs (inject-poison.ts), forged RPCs (inject-forged-rpc.ts). Each is
 * injected mid-job; what it must not reach beyond its own job is checked once the job ended
 * (RunContext.checkAfterJob).
 */

type Of<K extends FaultPlan['kind']> = Extract<FaultPlan, { kind: K }>;

export interface FaultHooks {
  readonly note: (s: string) => void;
  /** The fault's distinctive step happened at `at`. */
  readonly mark: (at: number) => void;
}

const SECOND_JOB_MS = 120_000;

/** Bytes that no reader can take for the file they replace. */
export function damagedBytes(damage: JobFileDamage, original: Buffer, seed: number): Buffer {
  const prng = new Prng(seed);
  const random = (n: number): Buffer => Buffer.from(Array.from({ length: n }, () => prng.int(0, 255)));
  switch (damage) {
    case 'torn':
      // A strict prefix of the JSON object, without its closing brace.
      return original.subarray(0, 1 + prng.int(0, Math.max(0, original.length - 3)));
    case 'zeros': {
      // An even length: zero pairs read as protobuf fields (tag 0, value 0), so the graph decodes,
      // empty; an odd one ends in a cut varint, which any decoder refuses.
      const n = Math.max(16, original.length);
      return Buffer.alloc(n + (n % 2));
    }
    case 'binary':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), random(62)]);
    case 'garbage':
      // Field 0 with wire type 7: an invalid protobuf tag, whatever follows.
      return Buffer.concat([Buffer.from([0x07]), random(63)]);
  }
}

/** What the listing must say of a job whose `file` was damaged. */
const DAMAGE_ERRORS: Readonly<Record<Of<'damaged-job-dir'>['file'], RegExp>> = {
  'status.json': /status\.json is not (valid JSON|a terminal job status)/,
  'jobgraph.pb': /jobgraph\.pb (cannot be decoded|names job)/,
};

async function runSecondJob(r: RunContext, seed: number): Promise<{ jobId: string; state: string; failure: string }> {
  const dir = join(r.workdir, 'second');
  await mkdir(join(dir, 'in'), { recursive: true });
  const prng = new Prng(seed);
  const lines = Array.from({ length: 40 }, (_, i) => `second job line ${i} word${prng.int(0, 9)}`);
  await writeFile(join(dir, 'in', 'part-000.txt'), `${lines.join('\n')}\n`);
  const { jobId } = await r.cluster.submit('examples/wordcount.ts', [
    '--input',
    join(dir, 'in'),
    '--output',
    join(dir, 'out'),
  ]);
  const deadline = Date.now() + SECOND_JOB_MS;
  for (;;) {
    const s = await r.cluster.jobStatus(jobId).catch(() => undefined);
    if (s && isTerminalJobState(s.state)) return { jobId, state: s.state, failure: s.failure };
    if (Date.now() > deadline) return { jobId, state: s?.state ?? 'unknown', failure: '' };
    await sleep(200);
  }
}

const STORED_FILE_MS = 10_000;

/** The file's bytes once it exists; undefined if it does not within STORED_FILE_MS. */
async function storedFile(path: string): Promise<Buffer | undefined> {
  const deadline = Date.now() + STORED_FILE_MS;
  for (;;) {
    const bytes = await readFile(path).catch(() => undefined);
    if (bytes || Date.now() > deadline) return bytes;
    await sleep(50);
  }
}

export async function injectDamagedJobDir(
  r: RunContext,
  f: Of<'damaged-job-dir'>,
  baseline: number,
  h: FaultHooks,
): Promise<void> {
  const second = runSecondJob(r, f.garbageSeed).catch((err: unknown) => new Error(errorMessage(err)));
  const triggered = await r.awaitTrigger(baseline, f.trigger);
  const s = await second;
  if (s instanceof Error) return h.note(`the second job could not be submitted: ${s.message}`);
  if (s.state === 'FAILED')
    r.problem(
      'lost',
      `the second job ${s.jobId} (a small word count next to the main job) FAILED: ${s.failure.split('\n')[0]}`,
    );
  if (s.state !== 'FINISHED') return h.note(`the second job ${s.jobId} did not finish (${s.state}): nothing damaged`);
  if (!triggered || r.monitor.terminal) return h.note('the job ended before the trigger (the second job finished)');

  const path = join(HaPaths.jobDir(r.cluster.haDir, s.jobId), f.file);
  // The leader reports a job ended a moment before it has stored status.json (seed 9140).
  const original = await storedFile(path);
  if (!original) return h.note(`${s.jobId}/${f.file} was not stored within ${STORED_FILE_MS} ms: nothing damaged`);
  await writeFile(path, damagedBytes(f.damage, original, f.garbageSeed));
  const damagedAt = Date.now();
  h.note(`${s.jobId}/${f.file}: ${f.damage} (${original.length} bytes replaced)`);
  const k = await r.killLeader('damaged-job-dir');
  if (!k) return h.note('no live leader to kill');
  h.mark(k.at);
  r.restartJobMaster(k.id);
  await r.awaitRecovery(k.epoch);

  r.checkAfterJob('damaged-job-dir', async () => {
    let jobs: JobSummary__Output[];
    try {
      jobs = await listJobs(r, 30_000);
    } catch (err) {
      r.problem('not-contained', `with ${s.jobId}/${f.file} damaged, ${errorMessage(err)}`);
      return;
    }
    const listed = jobs.find((j) => j.job_id === s.jobId);
    if (!listed) r.problem('not-contained', `the damaged job ${s.jobId} (${f.file}: ${f.damage}) is not listed`);
    else if (listed.state !== 'DAMAGED')
      r.problem(
        'not-contained',
        `the damaged job ${s.jobId} (${f.file}: ${f.damage}) is listed ${listed.state}, not DAMAGED`,
      );
    else if (!DAMAGE_ERRORS[f.file].test(listed.error))
      r.problem(
        'not-contained',
        `the damaged job ${s.jobId} is DAMAGED without naming ${f.file}: ${JSON.stringify(listed.error)}`,
      );
    if (!jobs.some((j) => j.job_id === r.jobId))
      r.problem('not-contained', `with ${s.jobId} damaged, the main job ${r.jobId} is not listed`);
    // Whether a damaged job finished is unknown to the new leader: it must not run it again.
    for (const p of (await r.cluster.processes()).filter((x) => x.role === 'taskmanager')) {
      const rerun = parseTaskEvents(await r.cluster.log(p.id), p.id).filter(
        (e) => e.jobId === s.jobId && e.event === 'task.deploy' && e.time > damagedAt,
      );
      if (rerun.length > 0)
        r.problem(
          'not-contained',
          `the damaged job ${s.jobId} was run again: ${rerun.length} task(s) deployed on ${p.id} after the damage`,
        );
    }
  });
}
