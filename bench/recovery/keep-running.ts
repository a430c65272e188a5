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
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureCorpus } from '../throughput/corpus.js';
import { execOk, jsonLines } from '../throughput/cluster.js';
import { FAST_FAILOVER_CONFIG, ROOT } from './cluster.js';
import { readCounts } from '../throughput/verify.js';
import { fmt } from './figures.js';
import { runFailoverJob, type FailoverResult } from './wordcount-failover.js';
import { LoadSampler, judge, verdictText, type LoadRecord } from '../load.js';

const MB = 1024 * 1024;
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

type ScenarioResult = FailoverResult & { scenario: Scenario; keepRunningTasks: boolean };

async function runScenario(
  scenario: Scenario,
  o: Options,
  inputDir: string,
  oracle: ReadonlyMap<string, string>,
  baselineMs: number | undefined,
): Promise<ScenarioResult> {
  const keepRunning = scenario !== 'keep-running-off';
  const r = await runFailoverJob({
    name: scenario,
    workdir: o.workdir,
    inputDir,
    oracle,
    config: { ...baseConfig(o.heartbeatTimeout), [KEEP_RUNNING]: String(keepRunning) },
    taskmanagers: 2,
    fault: baselineMs === undefined ? 'none' : 'leader',
    killAt: o.killAt,
    ...(baselineMs !== undefined ? { baselineMs } : {}),
    keep: o.keep,
  });
  return { ...r, scenario, keepRunningTasks: keepRunning };
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
  const oracle = readCounts([oracleFile]);
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
