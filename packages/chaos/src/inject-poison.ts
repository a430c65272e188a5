import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isTerminalJobState, sleep, type JobSummary__Output } from '@rebound/core';
import { REPO_ROOT } from './cluster.js';
import type { FaultPlan } from './faults.js';
import type { FaultHooks } from './inject-hostile.js';
import { listJobs } from './observe.js';
import type { RunContext } from './run-context.js';

/**
 * Poison jobs: a second job, submitted mid-job, whose code misbehaves on the JobMaster (at load
 * for poison-job, in its enumerator or coordinator for poison-runtime). Once the main job ended it
 * must have failed alone, with its reason, and no JobMaster the harness left alone may have died.
 */

type Of<K extends FaultPlan['kind']> = Extract<FaultPlan, { kind: K }>;

/** The reason a contained poison job fails with, by mode (packages/jobmaster/src/user-code/worker-user-code.ts). */
const LOAD_REASONS: Readonly<Record<Of<'poison-job'>['mode'], RegExp>> = {
  exit: /the job module exited its process \(exit code 7\) while loading/,
  throw: /chaos poison: thrown while building the job/,
  hang: /did not finish loading within \d+ ms \(jobmaster\.job-module\.load-timeout\)/,
};

/**
 * The runtime poison job's own user-code limits (job-level keys, -D on its submission): a loop
 * or an allocation fails it in seconds, not after the defaults' 5 s and 512 MiB.
 */
export const POISON_RUNTIME_CONFIG: Readonly<Record<string, string>> = {
  'jobmaster.user-code.call-timeout': '2 s',
  'jobmaster.user-code.heap-size': '64 mb',
};

/** The reason a contained runtime poison job fails with (packages/jobmaster/src/user-code/). */
export const RUNTIME_REASONS: Readonly<Record<Of<'poison-runtime'>['mode'], RegExp>> = {
  'timer-throw': /user code on the JobMaster crashed: .*chaos poison: the enumerator threw from a timer/,
  'split-exit': /user code on the JobMaster called process\.exit\(3\)/,
  // The watchdog finds the loop, or a call the JobMaster waits on while it loops (a reset).
  'coordinator-loop':
    /user code on the JobMaster (stopped answering for \d+ ms|did not return from \w+ within \d+ ms) \(jobmaster\.user-code\.call-timeout/,
  'split-alloc': /user code on the JobMaster ran out of its heap \(jobmaster\.user-code\.heap-size 64 MiB\)/,
};

/** A poison job whose loading JobMasters the harness killed is given up after max-crashes of them. */
const GIVEN_UP = /was not loaded again: \d+ JobMaster\(s\) in a row died while loading it/;

interface PoisonSpec {
  readonly label: string;
  /** The poison job's work directory (its output goes there). */
  readonly dir: string;
  readonly module: string;
  readonly jobName: string;
  readonly args: readonly string[];
  readonly config: Readonly<Record<string, string>>;
  readonly reason: RegExp;
  /** How long after the main job ended the poison job may still take to end. */
  readonly settleMs: number;
}

/**
 * What is wrong with how a poison job ended, or undefined if it failed as it must. Killed
 * JobMasters excuse only the load-crash verdict: they say nothing else about the job's code.
 */
export function poisonEndProblem(
  state: string,
  failure: string,
  reason: RegExp,
  harnessKilledJobMasters: boolean,
): string | undefined {
  if (state !== 'FAILED') return `ended ${state}, not FAILED`;
  if (reason.test(failure) || (harnessKilledJobMasters && GIVEN_UP.test(failure))) return undefined;
  return `FAILED without its reason ${String(reason)}: ${JSON.stringify(failure.split('\n')[0] ?? '')}`;
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

async function injectPoison(r: RunContext, spec: PoisonSpec, h: FaultHooks): Promise<void> {
  const before = await liveJobMasterPids(r);
  const known = new Set((await listJobs(r, 30_000)).map((j) => j.job_id));
  const at = Date.now();
  // A hanging module holds SubmitJob until the load timeout: the submission goes on meanwhile.
  // Whatever its outcome: a poison job's submission may fail.
  const submission = r.cluster
    .rebound([
      'submit',
      ...Object.entries(spec.config).flatMap(([k, v]) => ['-D', `${k}=${v}`]),
      join(REPO_ROOT, spec.module),
      '--json',
      '--detached',
      '--',
      ...spec.args,
      '--output',
      join(spec.dir, 'out'),
    ])
    .catch((err: unknown) => ({ code: 1, stdout: '', stderr: err instanceof Error ? err.message : String(err) }));
  let jobId: string | undefined;
  const deadline = Date.now() + 60_000;
  while (!jobId && Date.now() < deadline) {
    jobId = (await r.cluster.listJobs().catch(() => [] as JobSummary__Output[])).find(
      (j) => j.name === spec.jobName && !known.has(j.job_id),
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
  h.note(`submitted poison job ${jobId} (${spec.label}) while ${before.map((b) => b.id).join(', ')} ran`);
  const poisonId = jobId;
  const name = `poison job ${poisonId} (${spec.label})`;
  r.checkAfterJob(`poison job (${spec.label})`, async () => {
    const cli = await submission;
    let last: JobSummary__Output | undefined;
    const until = Date.now() + spec.settleMs;
    while (Date.now() < until) {
      last =
        (await r.cluster.listJobs().catch(() => [] as JobSummary__Output[])).find((j) => j.job_id === poisonId) ?? last;
      if (last && isTerminalJobState(last.state)) break;
      await sleep(200);
    }
    const lost = await jobMastersLost(r, before, at);
    if (lost.length > 0)
      r.problem('not-contained', `${name}: JobMaster(s) ${lost.join(', ')} died after it was submitted`);
    if (!last || !isTerminalJobState(last.state)) {
      r.problem(
        'not-contained',
        `${name} did not end within ${spec.settleMs} ms of the main job (last listed ${last?.state ?? 'never'})`,
      );
      return;
    }
    const status = await r.cluster.jobStatus(poisonId).catch(() => undefined);
    const failure = status?.failure ?? '';
    const problem = poisonEndProblem(
      last.state,
      failure,
      spec.reason,
      r.jmDisturbed.some((d) => d.at >= at),
    );
    if (problem) return r.problem('not-contained', `${name} ${problem}`);
    const took = last.finished_at_ms > 0 ? `, ${last.finished_at_ms - at} ms after submission` : '';
    h.note(`poison job FAILED${took}: ${failure.split('\n')[0]}; submit exited ${cli.code}`);
  });
}

export async function injectPoisonJob(r: RunContext, f: Of<'poison-job'>, h: FaultHooks): Promise<void> {
  const dir = join(r.workdir, 'poison');
  await mkdir(join(dir, 'in'), { recursive: true });
  await writeFile(join(dir, 'in', 'part-000.txt'), 'poison\n');
  return injectPoison(
    r,
    {
      label: `${f.mode} at load`,
      dir,
      module: 'packages/chaos/src/jobs/poison.ts',
      jobName: 'chaos-poison',
      // Poison only where a JobMaster loads it: the harness builds the graph in its own process.
      args: ['--poison', f.mode, '--harmless-in-pid', String(process.pid), '--input', join(dir, 'in')],
      config: {},
      reason: LOAD_REASONS[f.mode],
      // jobmaster.job-module.load-timeout (default 30 s, not shortened) plus room for a takeover.
      settleMs: 120_000,
    },
    h,
  );
}

export async function injectPoisonRuntime(r: RunContext, f: Of<'poison-runtime'>, h: FaultHooks): Promise<void> {
  const dir = join(r.workdir, 'poison-runtime');
  await mkdir(dir, { recursive: true });
  return injectPoison(
    r,
    {
      label: `${f.mode} at run time`,
      dir,
      module: 'packages/chaos/src/jobs/poison-runtime.ts',
      jobName: 'chaos-poison-runtime',
      args: ['--poison', f.mode],
      config: POISON_RUNTIME_CONFIG,
      reason: RUNTIME_REASONS[f.mode],
      // Its tasks may wait for slots until the main job ends; then one call timeout, or a takeover.
      settleMs: 60_000,
    },
    h,
  );
}
