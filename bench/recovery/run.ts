/**
 * Recovery benchmark (FLIP-383): what a JobMaster failover costs a batch job.
 *
 *   npx tsx bench/recovery/run.ts [--repeat 1] [--kill-at 0.6] [--standby-at recovered|kill|never]
 *       [--splits 200] [--rows-per-split 200] [--record-delay-ms 3] [--p1 3] [--p2 2]
 *       [--taskmanagers 3] [--slots 2] [--executions 10000] [--replay-runs 5]
 *       [--max-load 3] [--load-wait 5 min] [--skip-cluster] [--skip-replay] [--merge] [--keep]
 *       [--workdir DIR] [--results FILE]
 *
 * `--merge` with one of the --skip flags keeps the other part from the existing results file.
 * Before each measurement the run waits (up to --load-wait) for the 1-minute load to drop below
 * --max-load; the load before and after each job is recorded with it.
 *
 * One run = three jobs on the same job (bench/recovery/job.ts: 3 stages, splits + p1 + p2 tasks),
 * each on a fresh local cluster of 2 JobMasters and 3 TaskManagers with test-like timeouts:
 *   (a) no failure;
 *   (b) SIGKILL of the leading JobMaster at kill-at x (a)'s time, recovery on;
 *   (c) the same with recovery off (the new leader restarts the job from scratch).
 * A job's time is finished_at - submitted_at from its status (the client stamps submitted_at
 * before the submission RPC). After the kill a replacement standby is started with
 * `rebound local start-jobmaster` (by default once the new leader runs the job again, so its
 * start-up does not compete for the CPU during the failover being measured).
 *
 * Re-executed finished tasks come from the TaskManager logs: a subtask with a task.finish line
 * before the kill and a task.deploy line after it. Each is classified by the event log as it was
 * when the leader died (copied right after the kill, before any standby can lead): if its
 * ExecutionVertexFinished event was durable, rerunning it breaks the target (no TaskManager is
 * killed, so every TaskManager lived). The election time is the new leader's electedAtMs minus
 * the kill time.
 *
 * Then: replay + reconcile of a job with 10,000 finished executions, in-process (replay.ts).
 *
 * Prints tables and writes bench/results/recovery.json.
 */
import { cp, mkdir, readFile, readdir, writeFile } from 'node:fs/promises';
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { parseDuration, type RecoveryReport__Output } from '@rebound/core';
import { jobEventsDir } from '@rebound/event-store';
import { FileJobGraphStore } from '@rebound/ha';
import { BenchCluster, FAST_FAILOVER_CONFIG, ROOT, type KilledLeader } from './cluster.js';
import { durableFinished } from './event-log.js';
import {
  firstStatus,
  jobFigures,
  killFigures,
  sleep,
  statusAt,
  waitForJobEnd,
  waitForNewLeader,
  withFreshCluster,
  type KillFigures,
} from './failover-run.js';
import { fmt, median, pct } from './figures.js';
import { analyseReexecution, lostWorkPerSlot, ofNewLeader, type Reexecution } from './reexecution.js';
import type { ReplayBenchResult } from './replay-bench-result.js';
import { printReplayResult, runReplayBench } from './replay.js';
import { LoadSampler, judge, type LoadRecord } from '../load.js';

const JOB_FILE = join(ROOT, 'bench/recovery/job.ts');

/** The tests' short timeouts plus what the issue asks for. */
const BASE_CONFIG: Readonly<Record<string, string>> = {
  ...FAST_FAILOVER_CONFIG,
  'job-event.store.write-buffer.flush-interval': '100 ms',
  'execution.batch.job-recovery.previous-worker.recovery.timeout': '5 s',
};

type Scenario = 'no-failure' | 'recovery-on' | 'recovery-off';
type StandbyAt = 'recovered' | 'kill' | 'never';

interface Options {
  repeat: number;
  killAt: number;
  standbyAt: StandbyAt;
  jobArgs: { splits: number; rowsPerSplit: number; recordDelayMs: number; p1: number; p2: number; keys2: number };
  taskmanagers: number;
  slots: number;
  executions: number;
  replayRuns: number;
  maxLoad: number;
  loadWaitMs: number;
  skipCluster: boolean;
  skipReplay: boolean;
  keep: boolean;
  /** Keep the other part's results from the existing results file (with --skip-cluster or --skip-replay). */
  merge: boolean;
  workdir: string;
  results: string;
}

function parseOptions(): Options {
  const { values } = parseArgs({
    options: {
      repeat: { type: 'string', default: '1' },
      'kill-at': { type: 'string', default: '0.6' },
      'standby-at': { type: 'string', default: 'recovered' },
      splits: { type: 'string', default: '200' },
      'rows-per-split': { type: 'string', default: '200' },
      'record-delay-ms': { type: 'string', default: '3' },
      p1: { type: 'string', default: '3' },
      p2: { type: 'string', default: '2' },
      taskmanagers: { type: 'string', default: '3' },
      slots: { type: 'string', default: '2' },
      executions: { type: 'string', default: '10000' },
      'replay-runs': { type: 'string', default: '5' },
      'max-load': { type: 'string', default: '3' },
      'load-wait': { type: 'string', default: '5 min' },
      'skip-cluster': { type: 'boolean', default: false },
      'skip-replay': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      merge: { type: 'boolean', default: false },
      workdir: { type: 'string', default: '/tmp/rebound-bench-recovery' },
      results: { type: 'string', default: join(ROOT, 'bench/results/recovery.json') },
    },
    strict: true,
  });
  const int = (s: string, name: string, min: number): number => {
    const n = Number(s);
    if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${name} must be an integer >= ${min}, got '${s}'`);
    return n;
  };
  const killAt = Number(values['kill-at']);
  if (!(killAt > 0 && killAt < 1)) throw new Error(`--kill-at must be in (0, 1), got '${values['kill-at']}'`);
  const standbyAt = values['standby-at'];
  if (standbyAt !== 'recovered' && standbyAt !== 'kill' && standbyAt !== 'never')
    throw new Error(`--standby-at must be recovered, kill or never`);
  return {
    repeat: int(values.repeat, 'repeat', 1),
    killAt,
    standbyAt,
    jobArgs: {
      splits: int(values.splits, 'splits', 1),
      rowsPerSplit: int(values['rows-per-split'], 'rows-per-split', 1),
      recordDelayMs: int(values['record-delay-ms'], 'record-delay-ms', 0),
      p1: int(values.p1, 'p1', 1),
      p2: int(values.p2, 'p2', 1),
      keys2: 50,
    },
    taskmanagers: int(values.taskmanagers, 'taskmanagers', 1),
    slots: int(values.slots, 'slots', 1),
    executions: int(values.executions, 'executions', 1),
    replayRuns: int(values['replay-runs'], 'replay-runs', 1),
    maxLoad: Number(values['max-load']),
    loadWaitMs: parseDuration(values['load-wait'], 'load-wait'),
    skipCluster: values['skip-cluster'],
    skipReplay: values['skip-replay'],
    keep: values.keep,
    merge: values.merge,
    workdir: resolve(values.workdir),
    results: resolve(values.results),
  };
}

const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

/** Waits (up to `maxWaitMs`) for the 1-minute load to drop below `max`; other sessions share the machine. */
async function waitForQuietMachine(
  max: number,
  maxWaitMs: number,
  what: string,
): Promise<{ load: number; waitedMs: number }> {
  const t0 = Date.now();
  let said = false;
  while (load1() >= max && Date.now() - t0 < maxWaitMs) {
    if (!said)
      console.log(`  (load ${load1()} >= ${max}: waiting up to ${Math.round(maxWaitMs / 1000)} s before ${what})`);
    said = true;
    await sleep(5_000);
  }
  return { load: load1(), waitedMs: Date.now() - t0 };
}

interface ScenarioResult {
  scenario: Scenario;
  jobId: string;
  state: string;
  /** finished_at - submitted_at of the job. */
  jobMs: number;
  tasks: number;
  deployments: number;
  restarts: number;
  outputOk: boolean;
  outputProblem?: string;
  loadBefore: number;
  loadAfter: number;
  kill?: KillFigures & {
    /** First task.deploy of the new epoch - kill time. */
    firstRedeployMs: number;
    standby: string;
    recovery?: Record<string, number | boolean | string>;
    /** ms after the kill, from the logs of the new leader and the TaskManagers. */
    timeline: Record<string, number>;
    /**
     * Slot time of work thrown away, per slot: progress of the tasks running at the kill, plus the
     * whole run of finished tasks that ran again. Extra time ≈ kill → redeploy + this.
     */
    lostWorkPerSlotMs: number;
    reexecution: Reexecution;
    notes: string[];
  };
}

function scenarioConfig(scenario: Scenario): Record<string, string> {
  return { ...BASE_CONFIG, 'execution.batch.job-recovery.enabled': scenario === 'recovery-off' ? 'false' : 'true' };
}

function jobArgs(o: Options, output: string): string[] {
  const a = o.jobArgs;
  return [
    '--output',
    output,
    '--splits',
    String(a.splits),
    '--rows-per-split',
    String(a.rowsPerSplit),
    '--record-delay-ms',
    String(a.recordDelayMs),
    '--p1',
    String(a.p1),
    '--p2',
    String(a.p2),
    '--keys2',
    String(a.keys2),
  ];
}

/** Every key of the last stage must count splits * rows-per-split / keys2 rows. */
async function checkOutput(dir: string, o: Options): Promise<string | undefined> {
  const { splits, rowsPerSplit, keys2 } = o.jobArgs;
  const total = splits * rowsPerSplit;
  const files = (await readdir(dir).catch(() => [] as string[])).filter((n) => n.startsWith('part-'));
  const counts = new Map<number, number>();
  for (const f of files) {
    for (const line of (await readFile(join(dir, f), 'utf8')).split('\n')) {
      if (!line) continue;
      const [k, c] = line.split('\t').map(Number);
      if (counts.has(k!)) return `key ${k} appears twice`;
      counts.set(k!, c!);
    }
  }
  let sum = 0;
  for (const c of counts.values()) sum += c;
  if (sum !== total) return `counts sum to ${sum}, expected ${total} (${counts.size} keys in ${files.length} files)`;
  if (total % keys2 === 0 && [...counts.values()].some((c) => c !== total / keys2))
    return `a key's count differs from ${total / keys2}`;
  return undefined;
}

/** When the failover's steps happened, in ms after the kill (first occurrence of each). */
async function failoverTimeline(
  cluster: BenchCluster,
  newLeaderId: string,
  kill: KilledLeader,
): Promise<Record<string, number>> {
  const at = (o: Record<string, unknown>): number => Number(o.time) - kill.killedAtMs;
  const timeline: Record<string, number> = {};
  const first = (name: string, t: number): void => {
    if (!(name in timeline)) timeline[name] = t;
  };
  for (const o of await cluster.logLines(newLeaderId)) {
    if (Number(o.time) < kill.killedAtMs) continue;
    const msg = String(o.msg ?? '');
    if (msg.startsWith('the leader lease of')) first('leaseTakeover', at(o));
    else if (msg === 'granted leadership') first('grantedLeadership', at(o));
    else if (msg === 'taking over an unfinished job') first('jobModuleLoaded', at(o));
    else if (msg.startsWith('job enters RECONCILING')) first('reconcilingStarted', at(o));
    else if (msg === 'TaskManager registered') {
      first('firstTaskManagerRegistered', at(o));
      timeline.lastTaskManagerRegistered = at(o);
    } else if (msg === 'partitions reconciled') first('partitionsReconciled', at(o));
    else if (msg === 'job running') first('jobRunning', at(o));
  }
  for (const p of (await cluster.processes()).filter((x) => x.role === 'taskmanager')) {
    for (const o of await cluster.logLines(p.id)) {
      if (Number(o.time) < kill.killedAtMs) continue;
      if (o.msg === 'lost the JobMaster') first('firstTaskManagerLostJobMaster', at(o));
      if (o.event === 'task.fail' || o.event === 'task.cancel') first('firstTaskFailed', at(o));
    }
  }
  return Object.fromEntries(Object.entries(timeline).sort((a, b) => a[1] - b[1]));
}

async function runScenario(
  scenario: Scenario,
  o: Options,
  workdir: string,
  baselineMs: number | undefined,
): Promise<ScenarioResult> {
  const loadBefore = load1();
  const up = { jobmasters: 2, taskmanagers: o.taskmanagers, slots: o.slots, config: scenarioConfig(scenario) };
  return withFreshCluster(
    workdir,
    up,
    o.keep,
    async (cluster) => {
      const output = join(workdir, 'output');
      const { jobId } = await cluster.submit(JOB_FILE, jobArgs(o, output));
      const submittedAt = Number((await firstStatus(cluster, jobId)).submitted_at_ms);

      let kill: KilledLeader | undefined;
      let haCopy: string | undefined;
      let newLeader: { epoch: number; electedAtMs: number; jobmasterId: string } | undefined;
      let standby = 'none';
      if (baselineMs !== undefined) {
        const plannedAtJobMs = Math.round(o.killAt * baselineMs);
        const before = await statusAt(cluster, jobId, submittedAt + plannedAtJobMs);
        if (!before || before.state !== 'RUNNING')
          throw new Error(`the job is ${before?.state ?? 'unreachable'} at the planned kill time`);
        kill = await cluster.killLeader();
        // The log as the dead leader left it: no standby can lead for another lease timeout.
        if (scenario === 'recovery-on') {
          haCopy = join(workdir, 'events-at-kill');
          await cp(jobEventsDir(cluster.haDir, jobId), jobEventsDir(haCopy, jobId), { recursive: true });
        }
        if (o.standbyAt === 'kill') standby = (await cluster.startJobMaster()).id;
        newLeader = await waitForNewLeader(cluster, kill);
      }

      const deadline = Date.now() + Math.max(300_000, 10 * (baselineMs ?? 0));
      const status = await waitForJobEnd(cluster, jobId, deadline, async (s) => {
        if (
          kill &&
          o.standbyAt === 'recovered' &&
          standby === 'none' &&
          s.state === 'RUNNING' &&
          Number(s.leader_epoch) > kill.epoch
        ) {
          standby = (await cluster.startJobMaster()).id;
        }
      });
      const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
      const outputProblem =
        status.state === 'FINISHED' ? await checkOutput(output, o) : `job ${status.state}: ${status.failure}`;
      const result: ScenarioResult = {
        scenario,
        jobId,
        ...jobFigures(status, events, submittedAt),
        restarts: status.restarts,
        outputOk: outputProblem === undefined,
        ...(outputProblem ? { outputProblem } : {}),
        loadBefore,
        loadAfter: load1(),
      };
      if (kill && newLeader) {
        let durable: Map<string, number> | undefined;
        if (haCopy) {
          const { graph } = await new FileJobGraphStore(cluster.haDir).getJob(jobId);
          durable = await durableFinished(haCopy, graph);
        }
        const reexecution = analyseReexecution(events, kill, durable);
        const firstRedeploy = events.find((e) => e.event === 'task.deploy' && ofNewLeader(e, kill));
        const report: RecoveryReport__Output | undefined = status.recoveries[status.recoveries.length - 1];
        result.kill = {
          ...killFigures(kill, newLeader, submittedAt, Math.round(o.killAt * (baselineMs ?? 0))),
          firstRedeployMs: firstRedeploy ? firstRedeploy.time - kill.killedAtMs : NaN,
          standby,
          ...(report
            ? {
                recovery: {
                  replayMs: Number(report.replay_ms),
                  reconcileMs: Number(report.reconnect_wait_ms),
                  recoveryMs: Number(report.finished_at_ms) - Number(report.started_at_ms),
                  electedToRecoveryStartMs: Number(report.started_at_ms) - Number(report.elected_at_ms),
                  killToRunningMs: Number(report.finished_at_ms) - kill.killedAtMs,
                  eventsReplayed: report.events_replayed,
                  executionsRecovered: report.executions_recovered,
                  executionsReset: report.executions_reset,
                  partitionsReused: report.partitions_reused,
                  partitionsReleased: report.partitions_released,
                  partitionsMissing: report.partitions_missing,
                  restartedFromScratch: report.restarted_from_scratch,
                },
              }
            : {}),
          timeline: await failoverTimeline(cluster, newLeader.jobmasterId, kill),
          lostWorkPerSlotMs: Math.round(lostWorkPerSlot(events, kill, o.taskmanagers * o.slots)),
          reexecution,
          notes: status.notes,
        };
      }
      return result;
    },
    (result) => result.outputOk,
  );
}

interface RunTriple {
  noFailure: ScenarioResult;
  recoveryOn: ScenarioResult;
  recoveryOff: ScenarioResult;
  /** (on - no-failure) / no-failure. */
  ratioOn: number;
  ratioOff: number;
  extraOnMs: number;
  extraOffMs: number;
  /** Election + 1 s, the target for extraOnMs. */
  extraOnTargetMs: number;
  extraOnMet: boolean;
  /**
   * The same from the logs, less sensitive to a noisy machine: kill → first redeploy plus the
   * work thrown away per slot (compares the failover itself, not two runs of 30 s).
   */
  extraOnEstimateMs: number;
  extraOnEstimateMet: boolean;
  noDurableRerunMet: boolean;
}

function printTriple(t: RunTriple, i: number): void {
  const row = (r: ScenarioResult): Record<string, string | number> => ({
    scenario: r.scenario,
    'job time': fmt(r.jobMs),
    'vs no-failure':
      r.scenario === 'no-failure'
        ? '-'
        : `${r.jobMs >= t.noFailure.jobMs ? '+' : ''}${pct((r.jobMs - t.noFailure.jobMs) / t.noFailure.jobMs)}`,
    'kill at': r.kill ? fmt(r.kill.atJobMs) : '-',
    election: r.kill ? fmt(r.kill.electionMs) : '-',
    'kill → redeploy': r.kill ? fmt(r.kill.firstRedeployMs) : '-',
    'lost work/slot': r.kill ? fmt(r.kill.lostWorkPerSlotMs) : '-',
    'finished at kill': r.kill?.reexecution.finishedBeforeKill ?? '-',
    're-executed': r.kill ? `${r.kill.reexecution.reexecuted} (${pct(r.kill.reexecution.fraction)})` : '-',
    'of them durable': r.kill && r.scenario === 'recovery-on' ? r.kill.reexecution.reexecutedDurable.length : '-',
    tasks: r.tasks,
    deploys: r.deployments,
    output: r.outputOk ? 'ok' : `WRONG: ${r.outputProblem}`,
    load: `${r.loadBefore}→${r.loadAfter}`,
  });
  console.log(`\nRun ${i + 1}:`);
  console.table([row(t.noFailure), row(t.recoveryOn), row(t.recoveryOff)]);
  const rec = t.recoveryOn.kill?.recovery;
  if (rec) console.log('  recovery report (on):', JSON.stringify(rec));
  if (t.recoveryOn.kill)
    console.log('  failover timeline (on), ms after the kill:', JSON.stringify(t.recoveryOn.kill.timeline));
  if (t.recoveryOff.kill)
    console.log('  failover timeline (off), ms after the kill:', JSON.stringify(t.recoveryOff.kill.timeline));
  console.log(
    `  (on - no-failure)/no-failure = ${pct(t.ratioOn)} (+${fmt(t.extraOnMs)}), (off - no-failure)/no-failure = ${pct(t.ratioOff)} (+${fmt(t.extraOffMs)})\n` +
      `  extra time with recovery on ${fmt(t.extraOnMs)} vs election + 1 s = ${fmt(t.extraOnTargetMs)}: ${t.extraOnMet ? 'met' : 'MISSED'} ` +
      `(from the logs: kill → redeploy + lost work/slot = ${fmt(t.extraOnEstimateMs)}: ${t.extraOnEstimateMet ? 'met' : 'MISSED'}); ` +
      `durable finished tasks re-executed: ${t.recoveryOn.kill?.reexecution.reexecutedDurable.length ?? '?'} (${t.noDurableRerunMet ? 'met' : 'MISSED'})`,
  );
}

async function main(): Promise<void> {
  const o = parseOptions();
  const started = new Date().toISOString();
  const loadAtStart = loadavg().map((x) => Math.round(x * 100) / 100);
  const sampler = new LoadSampler();
  const triples: RunTriple[] = [];
  if (!o.skipCluster) {
    const tasks = o.jobArgs.splits + o.jobArgs.p1 + o.jobArgs.p2;
    console.log(
      `Job: ${o.jobArgs.splits} source splits x ${o.jobArgs.rowsPerSplit} rows x ${o.jobArgs.recordDelayMs} ms -> Sum (p ${o.jobArgs.p1}) -> Sum (p ${o.jobArgs.p2}) -> sink: ` +
        `${tasks} tasks on ${o.taskmanagers} TaskManagers x ${o.slots} slots; kill at ${o.killAt * 100}% of the no-failure time`,
    );
    for (let i = 0; i < o.repeat; i++) {
      const results: Partial<Record<Scenario, ScenarioResult>> = {};
      for (const scenario of ['no-failure', 'recovery-on', 'recovery-off'] as const) {
        const quiet = await waitForQuietMachine(o.maxLoad, o.loadWaitMs, scenario);
        process.stdout.write(`run ${i + 1}: ${scenario} (load ${quiet.load}) ... `);
        const r = await runScenario(
          scenario,
          o,
          join(o.workdir, `${scenario}-${i + 1}`),
          scenario === 'no-failure' ? undefined : results['no-failure']!.jobMs,
        );
        console.log(`${fmt(r.jobMs)}${r.outputOk ? '' : ` OUTPUT WRONG: ${r.outputProblem}`}`);
        results[scenario] = r;
      }
      const nf = results['no-failure']!;
      const on = results['recovery-on']!;
      const off = results['recovery-off']!;
      const extraOnTargetMs = (on.kill?.electionMs ?? NaN) + 1000;
      const t: RunTriple = {
        noFailure: nf,
        recoveryOn: on,
        recoveryOff: off,
        ratioOn: (on.jobMs - nf.jobMs) / nf.jobMs,
        ratioOff: (off.jobMs - nf.jobMs) / nf.jobMs,
        extraOnMs: on.jobMs - nf.jobMs,
        extraOffMs: off.jobMs - nf.jobMs,
        extraOnTargetMs,
        extraOnMet: on.jobMs - nf.jobMs <= extraOnTargetMs,
        extraOnEstimateMs: (on.kill?.firstRedeployMs ?? NaN) + (on.kill?.lostWorkPerSlotMs ?? NaN),
        extraOnEstimateMet: (on.kill?.firstRedeployMs ?? NaN) + (on.kill?.lostWorkPerSlotMs ?? NaN) <= extraOnTargetMs,
        noDurableRerunMet: (on.kill?.reexecution.reexecutedDurable.length ?? 1) === 0,
      };
      triples.push(t);
      printTriple(t, i);
    }
  }

  let replay: ReplayBenchResult | undefined;
  let replayLoad: LoadRecord | undefined;
  if (!o.skipReplay) {
    const quiet = await waitForQuietMachine(o.maxLoad, o.loadWaitMs, 'the replay benchmark');
    console.log(`\nreplay + reconcile of ${o.executions} executions (load ${quiet.load}) ...`);
    const replaySampler = new LoadSampler(2_000);
    replay = await runReplayBench({
      executions: o.executions,
      runs: o.replayRuns,
      consumerParallelism: 0,
      taskManagers: 3,
      stalePerTaskManager: 5,
    });
    replayLoad = replaySampler.stop();
    printReplayResult(replay, replayLoad);
  }

  const summary =
    triples.length > 0
      ? {
          runs: triples.length,
          medianNoFailureMs: median(triples.map((t) => t.noFailure.jobMs)),
          medianRecoveryOnMs: median(triples.map((t) => t.recoveryOn.jobMs)),
          medianRecoveryOffMs: median(triples.map((t) => t.recoveryOff.jobMs)),
          medianRatioOn: median(triples.map((t) => t.ratioOn)),
          medianRatioOff: median(triples.map((t) => t.ratioOff)),
          medianExtraOnMs: median(triples.map((t) => t.extraOnMs)),
          medianElectionMs: median(triples.map((t) => t.recoveryOn.kill?.electionMs ?? NaN)),
          medianReexecutedFractionOn: median(triples.map((t) => t.recoveryOn.kill?.reexecution.fraction ?? NaN)),
          medianReexecutedFractionOff: median(triples.map((t) => t.recoveryOff.kill?.reexecution.fraction ?? NaN)),
          durableReexecutedTotal: triples.reduce(
            (n, t) => n + (t.recoveryOn.kill?.reexecution.reexecutedDurable.length ?? 0),
            0,
          ),
          extraOnMetInRuns: triples.filter((t) => t.extraOnMet).length,
          medianExtraOnEstimateMs: median(triples.map((t) => t.extraOnEstimateMs)),
          extraOnEstimateMetInRuns: triples.filter((t) => t.extraOnEstimateMet).length,
          medianKillToRedeployOnMs: median(triples.map((t) => t.recoveryOn.kill?.firstRedeployMs ?? NaN)),
          medianLostWorkPerSlotOnMs: median(triples.map((t) => t.recoveryOn.kill?.lostWorkPerSlotMs ?? NaN)),
        }
      : undefined;
  const load = sampler.stop();
  const doc = {
    benchmark: 'recovery',
    at: started,
    machine: {
      cpus: availableParallelism(),
      cpuModel: cpus()[0]?.model ?? 'unknown',
      totalMemMb: Math.round(totalmem() / 1024 / 1024),
      node: process.version,
    },
    loadAverage: { start: loadAtStart, end: loadavg().map((x) => Math.round(x * 100) / 100), whole: load },
    // Targets are judged only when the sampled load stayed at or below the number of cores
    // (bench/load.ts); null: not judged, the figures are kept with the load they were taken at.
    targetsJudged: load.judged,
    replayTargetMet:
      replay && replayLoad
        ? judge(replay.warm.recoveryMs < replay.targetMs && replay.cold.recoveryMs < replay.targetMs, replayLoad)
        : undefined,
    replayLoad,
    settings: {
      cluster: { jobmasters: 2, taskmanagers: o.taskmanagers, slots: o.slots, config: BASE_CONFIG },
      job: {
        file: 'bench/recovery/job.ts',
        ...o.jobArgs,
        tasks: o.jobArgs.splits + o.jobArgs.p1 + o.jobArgs.p2,
        stages: 3,
      },
      killAt: o.killAt,
      standbyAt: o.standbyAt,
      noFailureRunHasRecoveryEnabled: true,
    },
    targets: {
      durableFinishedTasksReexecuted: 0,
      extraTimeRecoveryOn: 'election time + 1 s',
      replayPlusReconcileMs: 1000,
    },
    summary,
    runs: triples,
    replay,
  };
  let out: Record<string, unknown> = doc;
  if (o.merge) {
    const old = JSON.parse(await readFile(o.results, 'utf8').catch(() => '{}')) as Record<string, unknown>;
    // targetsJudged belongs to the cluster runs kept from the old file (absent if they predate it).
    if (o.skipCluster)
      out = {
        ...doc,
        at: old.at ?? doc.at,
        loadAverage: old.loadAverage,
        targetsJudged: old.targetsJudged,
        summary: old.summary,
        runs: old.runs,
        replayAt: started,
        replayLoadAverage: doc.loadAverage,
      };
    else if (o.skipReplay)
      out = { ...doc, replay: old.replay, replayAt: old.replayAt, replayLoadAverage: old.replayLoadAverage };
  }
  await mkdir(dirname(o.results), { recursive: true });
  await writeFile(o.results, `${JSON.stringify(out, null, 2)}\n`);
  console.log(`\nwrote ${o.results}`);
  if (!load.judged)
    console.log(
      `targets NOT JUDGED: the load average went up to ${load.max} on ${load.cores} cores (limit ${load.maxLoadForTargets}); figures kept with their load`,
    );
  if (summary) {
    console.log(
      `summary over ${summary.runs} run(s): no-failure ${fmt(summary.medianNoFailureMs)}, on ${fmt(summary.medianRecoveryOnMs)} (${pct(summary.medianRatioOn)}), ` +
        `off ${fmt(summary.medianRecoveryOffMs)} (${pct(summary.medianRatioOff)}); election ${fmt(summary.medianElectionMs)}; ` +
        `re-executed finished tasks on ${pct(summary.medianReexecutedFractionOn)} / off ${pct(summary.medianReexecutedFractionOff)}; ` +
        `durable re-executed ${summary.durableReexecutedTotal}; extra ${fmt(summary.medianExtraOnMs)} ≤ election + 1 s in ${summary.extraOnMetInRuns}/${summary.runs} ` +
        `(from the logs ${fmt(summary.medianExtraOnEstimateMs)}: ${summary.extraOnEstimateMetInRuns}/${summary.runs})`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(`recovery benchmark failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exit(1);
  },
);
