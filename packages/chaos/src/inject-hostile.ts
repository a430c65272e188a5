import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, isTerminalJobState, sleep, type JobSummary__Output } from '@rebound/core';
import { HaPaths } from '@rebound/ha';
import { REPO_ROOT } from './cluster.js';
import type { FaultPlan, JobFileDamage } from './faults.js';
import { Prng } from './prng.js';
import type { RunContext } from './run-context.js';
import { parseTaskEvents } from './task-log.js';

/**
 * The faults of a hostile or careless user rather than of a failing machine: a poison job, a
 * damaged job directory, forged RPCs. Each is injected mid-job; what it must not reach beyond its
 * own job is checked once the job ended (RunContext.checkAfterJob).
 */

type Of<K extends FaultPlan['kind']> = Extract<FaultPlan, { kind: K }>;

export interface FaultHooks {
  readonly note: (s: string) => void;
  /** The fault's distinctive step happened at `at`. */
  readonly mark: (at: number) => void;
}

export const POISON_MODULE = 'packages/chaos/src/jobs/poison.ts';
const POISON_JOB_NAME = 'chaos-poison';
/** jobmaster.job-module.load-timeout (default 30 s, not shortened) plus room for a takeover. */
const POISON_SETTLE_MS = 120_000;
const SECOND_JOB_MS = 120_000;

/** The reason a contained poison job fails with, by mode (packages/jobmaster/src/user-code/worker-user-code.ts). */
const POISON_REASONS: Readonly<Record<Of<'poison-job'>['mode'], RegExp>> = {
  exit: /the job module exited its process \(exit code 7\) while loading/,
  throw: /chaos poison: thrown while building the job/,
  hang: /did not finish loading within \d+ ms \(jobmaster\.job-module\.load-timeout\)/,
};
/** A poison job whose loading JobMasters the harness killed is given up after max-crashes of them. */
const GIVEN_UP = /was not loaded again: \d+ JobMaster\(s\) in a row died while loading it/;

/** ListJobs from whoever leads, retried across leader changes until `timeoutMs`. */
async function listJobs(r: RunContext, timeoutMs: number): Promise<JobSummary__Output[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await r.cluster.listJobs();
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`ListJobs failed for ${timeoutMs} ms: ${errorMessage(err)}`);
      await sleep(200);
    }
  }
}

async function liveJobMasterPids(r: RunContext): Promise<{ id: string; pid: number }[]> {
  const out: { id: string; pid: number }[] = [];
  for (const id of await r.aliveJobMasters()) out.push({ id, pid: (await r.cluster.process(id)).pid });
  return out;
}

/** A JobMaster alive at `since` that died or was replaced since, without the harness touching it. */
async function jobMastersLost(
  r: RunContext,
  before: readonly { id: string; pid: number }[],
  since: number,
): Promise<string[]> {
  const lost: string[] = [];
  for (const { id, pid } of before) {
    if (r.jmDisturbed.some((d) => d.id === id && d.at >= since)) continue;
    const now = await r.cluster.process(id);
    if (now.pid !== pid || !(await r.cluster.isAlive(id))) lost.push(`${id} (pid ${pid})`);
  }
  return lost;
}

export async function injectPoisonJob(r: RunContext, f: Of<'poison-job'>, h: FaultHooks): Promise<void> {
  const dir = join(r.workdir, 'poison');
  await mkdir(join(dir, 'in'), { recursive: true });
  await writeFile(join(dir, 'in', 'part-000.txt'), 'poison\n');
  const before = await liveJobMasterPids(r);
  const known = new Set((await listJobs(r, 30_000)).map((j) => j.job_id));
  const at = Date.now();
  // A hanging module holds SubmitJob until the load timeout: the submission goes on meanwhile.
  // Whatever its outcome: a poison job's submission may fail.
  const submission = r.cluster
    .rebound([
      'submit',
      join(REPO_ROOT, POISON_MODULE),
      '--json',
      '--detached',
      '--',
      '--poison',
      f.mode,
      '--harmless-in-pid',
      String(process.pid),
      '--input',
      join(dir, 'in'),
      '--output',
      join(dir, 'out'),
    ])
    .catch((err: unknown) => ({ code: 1, stdout: '', stderr: err instanceof Error ? err.message : String(err) }));
  let jobId: string | undefined;
  const deadline = Date.now() + 60_000;
  while (!jobId && Date.now() < deadline) {
    jobId = (await r.cluster.listJobs().catch(() => [] as JobSummary__Output[])).find(
      (j) => j.name === POISON_JOB_NAME && !known.has(j.job_id),
    )?.job_id;
    if (!jobId) await sleep(100);
  }
  if (!jobId) {
    const cli = await submission;
    h.note(
      `the poison job was never stored (submit exited ${cli.code}: ${(cli.stderr || cli.stdout).trim().split('\n')[0] ?? ''})`,
    );
    return;
  }
  // Stored: a JobMaster is loading it now.
  h.mark(at);
  h.note(`submitted poison job ${jobId} (${f.mode} at load) while ${before.map((b) => b.id).join(', ')} ran`);
  const poisonId = jobId;
  r.checkAfterJob('poison-job', async () => {
    const cli = await submission;
    let last: JobSummary__Output | undefined;
    const until = Date.now() + POISON_SETTLE_MS;
    while (Date.now() < until) {
      last =
        (await r.cluster.listJobs().catch(() => [] as JobSummary__Output[])).find((j) => j.job_id === poisonId) ?? last;
      if (last && isTerminalJobState(last.state)) break;
      await sleep(200);
    }
    const lost = await jobMastersLost(r, before, at);
    if (lost.length > 0)
      r.problem(
        'not-contained',
        `poison job ${poisonId} (${f.mode}): JobMaster(s) ${lost.join(', ')} died after it was submitted`,
      );
    if (!last || !isTerminalJobState(last.state)) {
      r.problem(
        'not-contained',
        `poison job ${poisonId} (${f.mode}) did not end within ${POISON_SETTLE_MS} ms (last listed ${last?.state ?? 'never'})`,
      );
      return;
    }
    const status = await r.cluster.jobStatus(poisonId).catch(() => undefined);
    const reason = status?.failure ?? '';
    const harnessKilledLoaders = r.jmDisturbed.some((d) => d.at >= at);
    if (last.state !== 'FAILED') {
      r.problem('not-contained', `poison job ${poisonId} (${f.mode}) ended ${last.state}, not FAILED`);
    } else if (!POISON_REASONS[f.mode].test(reason) && !(harnessKilledLoaders && GIVEN_UP.test(reason))) {
      r.problem(
        'not-contained',
        `poison job ${poisonId} (${f.mode}) FAILED without the load reason: ${JSON.stringify(reason.split('\n')[0] ?? '')}`,
      );
    } else {
      h.note(`poison job FAILED: ${reason.split('\n')[0]}; submit exited ${cli.code}`);
    }
  });
}

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
  const original = await readFile(path);
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
