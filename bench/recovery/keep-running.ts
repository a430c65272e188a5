/**
 * Recovery benchmark, issue 21 (scenario 4a): running tasks survive a JobMaster failover.
 *
 *   npx tsx bench/recovery/keep-running.ts [--mb 121] [--files 40] [--vocabulary 300000] [--seed 21]
 *       [--kill-at 0.6] [--heartbeat-timeout '10 s'] [--workdir DIR] [--results FILE] [--keep]
 *
 * examples/wordcount.ts over a generated Zipf corpus (bench/throughput/corpus.ts, written into
 * --workdir, never into the repository) on a fresh local cluster per job: 2 JobMasters,
 * 2 TaskManagers x 1 slot, batch job recovery on, 1 s leases (FAST_FAILOVER_CONFIG). Three jobs:
 *   (a) no failure;
 *   (b) SIGKILL of the leader at kill-at x (a)'s time, execution.batch.job-recovery.keep-running-tasks=true;
 *   (c) the same with keep-running-tasks=false (Flink's rule: running tasks fail and rerun).
 * The key is set explicitly in every job (and every daemon), whatever its default is.
 *
 * Figures per job: finished_at - submitted_at, the recovery report (running tasks adopted,
 * finished tasks reset), the subtasks deployed before the kill and deployed again after it (the
 * TaskManagers' task.deploy lines), election time, and the output against an independent oracle
 * (bench/throughput/baseline.mjs: one plain Node process, no Rebound code). Target with the key
 * on: 0 subtasks redeployed and total <= no-failure + election + 1 s. Targets are judged only
 * under bench/load.ts's rule; the figures are written with the load either way.
 */
import { mkdir, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { executionVertexKey, type JobStatus__Output, type RecoveryReport__Output } from '@rebound/core';
import { ensureCorpus } from '../throughput/corpus.js';
import { execOk, jsonLines } from '../throughput/cluster.js';
import { BenchCluster, FAST_FAILOVER_CONFIG, ROOT, type KilledLeader, type TaskEvent } from './cluster.js';
import { LoadSampler, judge, verdictText, type LoadRecord } from '../load.js';

const MB = 1024 * 1024;
const JOB_FILE = join(ROOT, 'examples/wordcount.ts');
const KEEP_RUNNING = 'execution.batch.job-recovery.keep-running-tasks';

/**
 * heartbeat.timeout is raised from the tests' 2 s (--heartbeat-timeout): at the end of a source
 * subtask over this vocabulary (~260k keys out of the combiner) a TaskManager on a loaded 2-core
 * machine missed heartbeats for more than 2 s, the leader took it for lost and failed its tasks,
 * and the job restarted them again and again without any fault injected. Leader loss is still
 * noticed within the 1 s lease: the TaskManagers follow leader.json.
 */
function baseConfig(heartbeatTimeout: string): Record<string, string> {
  return {
    ...FAST_FAILOVER_CONFIG,
    'heartbeat.timeout': heartbeatTimeout,
    'execution.batch.job-recovery.enabled': 'true',
    'execution.batch.job-recovery.previous-worker.recovery.timeout': '5 s',
    'job-event.store.write-buffer.flush-interval': '100 ms',
  };
}

type Scenario = 'no-failure' | 'keep-running-on' | 'keep-running-off';

interface Options {
  mb: number;
  files: number;
  vocabulary: number;
  seed: number;
  killAt: number;
  heartbeatTimeout: string;
  workdir: string;
  results: string;
  keep: boolean;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      mb: { type: 'string', default: '121' },
      files: { type: 'string', default: '40' },
      vocabulary: { type: 'string', default: '300000' },
      seed: { type: 'string', default: '21' },
      'kill-at': { type: 'string', default: '0.6' },
      'heartbeat-timeout': { type: 'string', default: '10 s' },
      workdir: { type: 'string', default: '/tmp/rebound-bench-keep-running' },
      results: { type: 'string', default: join(ROOT, 'bench/results/recovery-keep-running.json') },
      keep: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const num = (s: string, name: string, min: number): number => {
    const n = Number(s);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number >= ${min}, got '${s}'`);
    return n;
  };
  const killAt = Number(values['kill-at']);
  if (!(killAt > 0 && killAt < 1)) throw new Error(`--kill-at must be in (0, 1), got '${values['kill-at']}'`);
  return {
    mb: num(values.mb, 'mb', 1),
    files: Math.round(num(values.files, 'files', 2)),
    vocabulary: Math.round(num(values.vocabulary, 'vocabulary', 10)),
    seed: Math.round(num(values.seed, 'seed', 0)),
    killAt,
    heartbeatTimeout: values['heartbeat-timeout'],
    workdir: resolve(values.workdir),
    results: resolve(values.results),
    keep: values.keep,
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const fmt = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '-');

/** `word<TAB>count` lines of the files, in a map; a word twice is an error. */
async function readCounts(paths: readonly string[]): Promise<Map<string, string>> {
  const counts = new Map<string, string>();
  for (const p of paths) {
    for (const line of (await readFile(p, 'utf8')).split('\n')) {
      if (line === '') continue;
      const tab = line.lastIndexOf('\t');
      const word = line.slice(0, tab);
      if (counts.has(word)) throw new Error(`word '${word}' appears twice in ${p}`);
      counts.set(word, line.slice(tab + 1));
    }
  }
  return counts;
}

/** Undefined when the cluster's part files hold exactly the oracle's counts, else what differs. */
async function compareWithOracle(oracle: ReadonlyMap<string, string>, outputDir: string): Promise<string | undefined> {
  const parts = (await readdir(outputDir).catch(() => [] as string[]))
    .filter((n) => n.startsWith('part-'))
    .map((n) => join(outputDir, n));
  let actual: Map<string, string>;
  try {
    actual = await readCounts(parts);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  const problems: string[] = [];
  for (const [w, c] of oracle) if (actual.get(w) !== c) problems.push(`${w}: ${c} vs ${actual.get(w) ?? 'missing'}`);
  for (const w of actual.keys()) if (!oracle.has(w)) problems.push(`${w}: only in the cluster's output`);
  return problems.length === 0 ? undefined : `${problems.length} words differ, e.g. ${problems.slice(0, 3).join('; ')}`;
}

interface ScenarioResult {
  scenario: Scenario;
  keepRunningTasks: boolean;
  jobId: string;
  state: string;
  jobMs: number;
  tasks: number;
  deployments: number;
  outputExact: boolean;
  outputProblem?: string;
  /** Set when the job had ended before the planned kill (no failover measured). */
  killMissed?: string;
  kill?: {
    plannedAtJobMs: number;
    atJobMs: number;
    oldEpoch: number;
    newEpoch: number;
    electionMs: number;
    /** Subtasks deployed before the kill that were still running at it. */
    runningAtKill: number;
    /** Subtasks deployed before the kill and deployed again after it (TaskManager logs). */
    redeployed: string[];
    /** Deployments of the new epoch in all (first deployments of later stages included). */
    deploymentsAfterKill: number;
    recovery?: {
      runningTasksAdopted: number;
      finishedTasksReported: number;
      executionsRecovered: number;
      executionsReset: number;
      partitionsReused: number;
      restartedFromScratch: boolean;
      reconcileMs: number;
      electedToRunningMs: number;
    };
  };
}

function redeployedAfter(events: readonly TaskEvent[], kill: KilledLeader) {
  const before = new Set<string>();
  const finishedBefore = new Set<string>();
  const after = new Set<string>();
  let deploymentsAfterKill = 0;
  for (const e of events) {
    const key = executionVertexKey(e.vertexId, e.subtask);
    const old = e.time < kill.killedAtMs && (e.epoch ?? 0) <= kill.epoch;
    if (e.event === 'task.deploy' && old) before.add(key);
    if (e.event === 'task.finish' && old) finishedBefore.add(key);
    if (e.event === 'task.deploy' && (e.epoch ?? 0) > kill.epoch) {
      after.add(key);
      deploymentsAfterKill++;
    }
  }
  return {
    runningAtKill: [...before].filter((k) => !finishedBefore.has(k)).length,
    redeployed: [...before].filter((k) => after.has(k)).sort(),
    deploymentsAfterKill,
  };
}

async function runScenario(
  scenario: Scenario,
  o: Options,
  inputDir: string,
  oracle: ReadonlyMap<string, string>,
  baselineMs: number | undefined,
): Promise<ScenarioResult> {
  const workdir = join(o.workdir, scenario);
  await rm(workdir, { recursive: true, force: true });
  await mkdir(workdir, { recursive: true });
  const keepRunning = scenario !== 'keep-running-off';
  const config = { ...baseConfig(o.heartbeatTimeout), [KEEP_RUNNING]: String(keepRunning) };
  const cluster = await BenchCluster.start(workdir, { jobmasters: 2, taskmanagers: 2, slots: 1, config });
  let ok = false;
  try {
    const output = join(workdir, 'output');
    const { jobId } = await cluster.submit(JOB_FILE, ['--input', inputDir, '--output', output], { config });
    let status: JobStatus__Output | undefined;
    while (!(status = await cluster.jobStatus(jobId).catch(() => undefined))) await sleep(20);
    const submittedAt = Number(status.submitted_at_ms);
    let kill: KilledLeader | undefined;
    let newLeader: { epoch: number; electedAtMs: number } | undefined;
    let killMissed: string | undefined;
    if (baselineMs !== undefined) {
      const wait = submittedAt + Math.round(o.killAt * baselineMs) - Date.now();
      if (wait > 0) await sleep(wait);
      const before = await cluster.jobStatus(jobId).catch(() => undefined);
      // The machine is shared: a job can run faster than its no-failure run. Recorded, not fatal.
      if (!before || before.state !== 'RUNNING')
        killMissed = `the job was ${before?.state ?? 'unreachable'} at the planned kill time`;
    }
    if (baselineMs !== undefined && killMissed === undefined) {
      kill = await cluster.killLeader();
      const deadline = kill.killedAtMs + 60_000;
      while (!newLeader) {
        const l = await cluster.leader();
        if (l && l.epoch > kill.epoch) newLeader = l;
        else if (Date.now() > deadline) throw new Error('no new leader within 60 s of the kill');
        else await sleep(10);
      }
    }
    const deadline = Date.now() + Math.max(300_000, 10 * (baselineMs ?? 0));
    for (;;) {
      status = await cluster.jobStatus(jobId).catch(() => undefined);
      if (status && ['FINISHED', 'FAILED', 'CANCELED'].includes(status.state) && Number(status.finished_at_ms) > 0)
        break;
      if (Date.now() > deadline) throw new Error(`job ${jobId} did not finish in time (${status?.state ?? '?'})`);
      await sleep(100);
    }
    const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
    const outputProblem =
      status.state === 'FINISHED' ? await compareWithOracle(oracle, output) : `job ${status.state}: ${status.failure}`;
    const result: ScenarioResult = {
      scenario,
      keepRunningTasks: keepRunning,
      jobId,
      state: status.state,
      jobMs: Number(status.finished_at_ms) - submittedAt,
      tasks: status.vertices.reduce((n, v) => n + v.parallelism, 0),
      deployments: events.filter((e) => e.event === 'task.deploy').length,
      outputExact: outputProblem === undefined,
      ...(outputProblem ? { outputProblem } : {}),
      ...(killMissed ? { killMissed } : {}),
    };
    if (kill && newLeader) {
      const report: RecoveryReport__Output | undefined = status.recoveries.find((r) => Number(r.epoch) > kill.epoch);
      result.kill = {
        plannedAtJobMs: Math.round(o.killAt * (baselineMs ?? 0)),
        atJobMs: kill.killedAtMs - submittedAt,
        oldEpoch: kill.epoch,
        newEpoch: newLeader.epoch,
        electionMs: newLeader.electedAtMs - kill.killedAtMs,
        ...redeployedAfter(events, kill),
        ...(report
          ? {
              recovery: {
                runningTasksAdopted: report.running_tasks_adopted,
                finishedTasksReported: report.finished_tasks_reported,
                executionsRecovered: report.executions_recovered,
                executionsReset: report.executions_reset,
                partitionsReused: report.partitions_reused,
                restartedFromScratch: report.restarted_from_scratch,
                reconcileMs: Number(report.reconnect_wait_ms),
                electedToRunningMs: Number(report.finished_at_ms) - Number(report.elected_at_ms),
              },
            }
          : {}),
      };
    }
    ok = result.outputExact;
    return result;
  } finally {
    await cluster.stop();
    if (ok && !o.keep) await rm(workdir, { recursive: true, force: true });
    else console.log(`  (keeping ${workdir})`);
  }
}

function printResults(results: readonly ScenarioResult[], noFailureMs: number): void {
  console.table(
    results.map((r) => ({
      scenario: r.scenario,
      'job time': fmt(r.jobMs),
      'vs no-failure': r.scenario === 'no-failure' ? '-' : `+${fmt(r.jobMs - noFailureMs)}`,
      'kill at': r.kill ? fmt(r.kill.atJobMs) : '-',
      election: r.kill ? fmt(r.kill.electionMs) : '-',
      'running at kill': r.kill?.runningAtKill ?? '-',
      'running tasks adopted': r.kill?.recovery?.runningTasksAdopted ?? '-',
      redeployed: r.kill ? r.kill.redeployed.length : '-',
      'finished reset': r.kill?.recovery?.executionsReset ?? '-',
      tasks: r.tasks,
      deploys: r.deployments,
      output: r.outputExact ? 'exact' : `WRONG: ${r.outputProblem}`,
    })),
  );
}

async function main(): Promise<void> {
  const o = parseOptions();
  const started = new Date().toISOString();
  await mkdir(o.workdir, { recursive: true });
  const inputDir = join(o.workdir, `input-${o.mb}mb-${o.files}f-s${o.seed}-v${o.vocabulary}`);
  const corpus = ensureCorpus({
    dir: inputDir,
    totalBytes: Math.round(o.mb * MB),
    files: o.files,
    seed: o.seed,
    vocabulary: o.vocabulary,
    zipfExponent: 1.0,
  });
  console.log(
    `input: ${(corpus.bytes / MB).toFixed(1)} MB in ${corpus.files.length} files, Zipf vocabulary of ${o.vocabulary} ` +
      `(${corpus.reused ? 'reused' : `generated in ${corpus.generateSeconds.toFixed(1)} s`})`,
  );
  const oracleFile = join(o.workdir, 'oracle.tsv');
  const oracleRun = jsonLines(
    (
      await execOk(process.execPath, [
        join(ROOT, 'bench/throughput/baseline.mjs'),
        '--input',
        inputDir,
        '--output',
        oracleFile,
      ])
    ).stdout,
  )[0];
  const oracle = await readCounts([oracleFile]);
  console.log(`oracle (one plain Node process): ${oracle.size} distinct words, ${String(oracleRun?.words)} words`);

  const sampler = new LoadSampler();
  const results: ScenarioResult[] = [];
  let noFailureMs: number | undefined;
  for (const scenario of ['no-failure', 'keep-running-on', 'keep-running-off'] as const) {
    process.stdout.write(`${scenario} ... `);
    const r = await runScenario(scenario, o, inputDir, oracle, noFailureMs);
    console.log(`${fmt(r.jobMs)}${r.outputExact ? '' : ` OUTPUT WRONG: ${r.outputProblem}`}`);
    if (scenario === 'no-failure') noFailureMs = r.jobMs;
    results.push(r);
  }
  const load: LoadRecord = sampler.stop();
  const [nf, on, off] = results as [ScenarioResult, ScenarioResult, ScenarioResult];
  printResults(results, nf.jobMs);

  const targetMs = nf.jobMs + (on.kill?.electionMs ?? NaN) + 1000;
  const noRedeployMet = on.kill !== undefined && on.kill.redeployed.length === 0;
  const timeMet = on.kill !== undefined && on.jobMs <= targetMs;
  const outputsExact = results.every((r) => r.outputExact);
  const verdicts = {
    // null also when the kill missed the job (it ended first): nothing was measured.
    keepRunningOnNoRedeploy: on.kill ? judge(noRedeployMet, load) : null,
    keepRunningOnTotalWithinElectionPlus1s: on.kill ? judge(timeMet, load) : null,
    // Correctness does not depend on the load: always judged.
    outputsExact,
  };
  console.log(
    `\nkeep-running on: ${on.kill?.redeployed.length ?? '?'} subtasks redeployed, ${on.kill?.recovery?.runningTasksAdopted ?? '?'} running tasks adopted: ${verdictText(verdicts.keepRunningOnNoRedeploy, load)}\n` +
      `keep-running on: total ${fmt(on.jobMs)} vs no-failure + election + 1 s = ${fmt(targetMs)}: ${verdictText(verdicts.keepRunningOnTotalWithinElectionPlus1s, load)}\n` +
      `keep-running off: total ${fmt(off.jobMs)}, ${off.kill?.redeployed.length ?? '?'} subtasks redeployed\n` +
      `outputs exact against the oracle: ${outputsExact ? 'yes' : 'NO'}`,
  );
  const doc = {
    benchmark: 'recovery-keep-running',
    issue: 21,
    at: started,
    command: `npx tsx bench/recovery/keep-running.ts --mb ${o.mb} --files ${o.files} --vocabulary ${o.vocabulary} --seed ${o.seed} --kill-at ${o.killAt} --heartbeat-timeout '${o.heartbeatTimeout}'`,
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      totalMemMb: Math.round(totalmem() / 1024 / 1024),
      node: process.version,
    },
    load,
    // null: not judged (other processes took more than bench/load.ts allows); figures kept.
    targetsJudged: load.judged,
    verdicts,
    settings: {
      cluster: {
        jobmasters: 2,
        taskmanagers: 2,
        slots: 1,
        config: baseConfig(o.heartbeatTimeout),
        keepRunningKey: KEEP_RUNNING,
      },
      job: 'examples/wordcount.ts',
      input: { mb: Math.round((corpus.bytes / MB) * 10) / 10, files: corpus.files.length, vocabulary: o.vocabulary },
      killAt: o.killAt,
      standby: 'none started after the kill (one JobMaster left)',
    },
    targets: {
      keepRunningOnSubtasksRedeployed: 0,
      keepRunningOnTotal: 'no-failure + election + 1 s',
      outputs: 'exact against bench/throughput/baseline.mjs',
    },
    summary: {
      noFailureMs: nf.jobMs,
      keepRunningOnMs: on.jobMs,
      keepRunningOffMs: off.jobMs,
      targetMs,
      electionMs: on.kill?.electionMs,
      runningTasksAdoptedOn: on.kill?.recovery?.runningTasksAdopted,
      redeployedOn: on.kill?.redeployed.length,
      runningTasksAdoptedOff: off.kill?.recovery?.runningTasksAdopted,
      redeployedOff: off.kill?.redeployed.length,
    },
    runs: results,
  };
  await mkdir(dirname(o.results), { recursive: true });
  await writeFile(o.results, `${JSON.stringify(doc, null, 2)}\n`);
  console.log(`wrote ${o.results}${load.judged ? '' : ' (targets NOT JUDGED under this load)'}`);
  if (!o.keep) await rm(o.workdir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`keep-running benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
