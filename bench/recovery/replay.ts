/**
 * Replay + reconcile of a job with N (default 10,000) finished executions, in-process.
 *
 *   npx tsx bench/recovery/replay.ts [--executions 10000] [--runs 5]
 *       [--consumer-parallelism 0] [--profile DIR]
 *
 * `--profile DIR` writes a .cpuprofile of each start(true) (its totals then include the
 * profiler's own cost; summarise with bench/throughput/profile-summary.ts).
 *
 * The event log is written the way a JobMaster writes it: an ExecutionGraph of the job below with
 * the real JobEventRecorder listening, a real SourceCoordinator handing one split to each source
 * subtask (so every finished event carries its increment, and full snapshots go out per
 * `snapshot.min-pause` of a simulated clock and with the vertex's last event), through
 * FileSystemJobEventStore under a temp HA directory. Then the consumer vertex is initialized.
 *
 *   job:  Source: Rows (N subtasks, one split each) -> Map -> HASH -> Sum (adaptive: 128
 *         subpartitions per producer; or --consumer-parallelism) -> Sink
 *
 * Timed: a new JobMaster (epoch 2) running `start(takeover = true)` on a copy of that log:
 * JobEventManager.replay into ReplayedJobState, applyReplay (ExecutionGraph.initializeVertex,
 * markFinished per execution, SourceCoordinator.restore with the increments and the newest
 * snapshot) and reconcilePartitions through a real TaskManagerRegistry against three TaskManager
 * processes (fake-taskmanager.ts) that report all N retained partitions with their metrics, as
 * TaskExecutor does, plus a few stale ones that get released. The TaskManagers are registered
 * before the JobMaster starts, so the wait for them to notice the new leader is not part of the
 * number (the cluster benchmark has it): only the work is. The JobMaster's clock is
 * sub-millisecond, so the recovery report's replay / apply / reconcile split is exact.
 *
 * The parts are also timed one by one outside the JobMaster (read+decode only, apply only,
 * graph only, coordinator restore only, reconciliation bookkeeping only) to show where time goes.
 */
import { judge, verdictText, type LoadRecord } from '../load.js';
import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { createLogger, silentLogger, type RecoveryReport } from '@rebound/core';
import { JobEventManager } from '@rebound/event-store';
import { InProcessUserCode, JobMaster, TaskManagerRegistry } from '@rebound/jobmaster';
import { eventStoreOf } from './event-log.js';
import { median } from './figures.js';
import { startFakeTaskManagers, type FakeTaskManager } from './fake-taskmanager-processes.js';
import type { Measurement, RecoveryTiming, ReplayBenchOptions, ReplayBenchResult } from './replay-bench-result.js';
import { fineClock, writeFixture, type Fixture } from './replay-fixture.js';
import { timeParts } from './replay-parts.js';

/** Issue 24: replay + reconcile of 10,000 finished executions, on a quiet machine. */
const TARGETS_MS = { cold: 200, warm: 120 };

/** Samples this process with the inspector's Profiler while `fn` runs; writes `<dir>/<name>.cpuprofile`. */
async function profiled<T>(dir: string | undefined, name: string, fn: () => Promise<T>): Promise<T> {
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((res, rej) => session.post(method, params ?? {}, (err, r) => (err ? rej(err) : res(r))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: object };
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

async function recoverOnce(
  f: Fixture,
  fakes: readonly FakeTaskManager[],
  baseDir: string,
  epoch: number,
  profile?: { dir: string; name: string },
): Promise<RecoveryTiming> {
  // Each run recovers from an untouched copy of the first JobMaster's log.
  const haDir = await mkdtemp(join(baseDir, 'rebound-replay-run-'));
  await cp(f.haDir, haDir, { recursive: true });
  const logger = createLogger('replay-bench', { level: process.env.REPLAY_BENCH_DEBUG ? 'debug' : 'warn' });
  // Assigned once below; the registry calls back before that (registrations), so no const.
  // eslint-disable-next-line prefer-const
  let job: JobMaster | undefined;
  const registry = new TaskManagerRegistry(
    epoch,
    'jm-bench',
    f.config,
    {
      onTaskManagerRegistered: (tm, retained) => job?.onTaskManagerRegistered(tm, retained),
      onTaskManagerLost: (tmId, reason) => job?.onTaskManagerLost(tmId, reason),
    },
    logger,
    fineClock,
  );
  // Zero slots: after recovery the job must not deploy anything (nothing would run it).
  for (const tm of fakes)
    registry.register({
      task_manager_id: tm.id,
      address: tm.address,
      slots: 0,
      epoch,
      jobs_with_retained_partitions: [f.graph.job_id],
      session_id: `session-${tm.id}`,
    });
  const events = new JobEventManager(
    eventStoreOf(haDir, f.graph.job_id, epoch, { config: f.config, clock: fineClock }),
    fineClock,
  );
  const reports: RecoveryReport[] = [];
  job = new JobMaster(f.graph, new InProcessUserCode(f.operators, silentLogger()), {
    epoch,
    jobmasterId: 'jm-bench',
    address: '127.0.0.1:1',
    config: f.config,
    registry,
    logger,
    clock: fineClock,
    events,
    electedAtMs: fineClock.now(),
    recoveries: [],
    saveRecoveries: async (_jobId, r) => {
      reports.splice(0, reports.length, ...r);
    },
    saveCommitManifest: async () => {},
    onTerminal: async () => {},
    onSlotsFreed: () => {},
  });
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const started = job;
  await profiled(profile?.dir, profile?.name ?? '', () => started.start(true));
  const totalMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const report = reports[0];
  if (!report || report.restarted_from_scratch)
    throw new Error(`recovery failed: ${JSON.stringify(report ?? job.status())}`);
  if (job.state !== 'RUNNING') throw new Error(`job is ${job.state} after recovery: ${job.failure}`);
  await job.suspend();
  registry.close();
  await rm(haDir, { recursive: true, force: true });
  const replayMs = Number(report.replay_ms);
  const reconcileMs = Number(report.reconnect_wait_ms);
  const recoveryMs = Number(report.finished_at_ms) - Number(report.started_at_ms);
  return {
    totalMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    replayMs,
    reconcileMs,
    applyMs: recoveryMs - replayMs - reconcileMs,
    recoveryMs,
    eventsReplayed: Number(report.events_replayed),
    executionsRecovered: Number(report.executions_recovered),
    partitionsReused: Number(report.partitions_reused),
    partitionsReleased: Number(report.partitions_released),
    partitionsMissing: Number(report.partitions_missing),
  };
}

function medianTiming(runs: readonly RecoveryTiming[]): RecoveryTiming {
  const pick = (k: keyof RecoveryTiming): number => median(runs.map((r) => r[k]));
  return {
    totalMs: pick('totalMs'),
    cpuMs: pick('cpuMs'),
    replayMs: pick('replayMs'),
    applyMs: pick('applyMs'),
    reconcileMs: pick('reconcileMs'),
    recoveryMs: pick('recoveryMs'),
    eventsReplayed: pick('eventsReplayed'),
    executionsRecovered: pick('executionsRecovered'),
    partitionsReused: pick('partitionsReused'),
    partitionsReleased: pick('partitionsReleased'),
    partitionsMissing: pick('partitionsMissing'),
  };
}

async function measure(
  fixture: Fixture,
  opts: ReplayBenchOptions,
  fakes: readonly FakeTaskManager[],
  runs: number,
  baseDir: string,
  firstEpoch: number,
  label: string,
): Promise<Measurement> {
  const out: RecoveryTiming[] = [];
  for (let r = 0; r < runs; r++) {
    const profile = opts.profileDir ? { dir: opts.profileDir, name: `recovery-${label}-${r + 1}` } : undefined;
    const timing = await recoverOnce(fixture, fakes, baseDir, firstEpoch + r, profile);
    if (timing.executionsRecovered !== opts.executions || timing.partitionsMissing !== 0) {
      throw new Error(
        `recovery run ${r + 1} recovered ${timing.executionsRecovered} executions, ${timing.partitionsMissing} partitions missing`,
      );
    }
    out.push(timing);
  }
  return { cold: out[0]!, warm: medianTiming(out.length > 1 ? out.slice(1) : out), runs: out };
}

export async function runReplayBench(opts: ReplayBenchOptions, baseDir = tmpdir()): Promise<ReplayBenchResult> {
  const fixture = await writeFixture(opts, baseDir);
  let fakes: FakeTaskManager[] = [];
  try {
    fakes = await startFakeTaskManagers(fixture, opts);
    const main = await measure(fixture, opts, fakes, opts.runs, baseDir, 2, 'bytes');
    const { parts, snapshots } = await timeParts(fixture, fakes, baseDir);
    return {
      executions: opts.executions,
      events: fixture.events,
      logBytes: fixture.logBytes,
      logFiles: fixture.logFiles,
      snapshots,
      subpartitionsPerPartition: fixture.subpartitions,
      consumerParallelism: fixture.consumerParallelism,
      writeMs: fixture.writeMs,
      ...main,
      parts,
      targetsMs: TARGETS_MS,
    };
  } finally {
    for (const f of fakes) await f.close().catch(() => {});
    await rm(fixture.haDir, { recursive: true, force: true });
  }
}

const round1 = (x: number): number => Math.round(x * 10) / 10;

function timingRows(runs: readonly RecoveryTiming[]): Record<string, string | number>[] {
  return runs.map((t, i) => ({
    run: i === 0 ? '1 (cold)' : String(i + 1),
    'replay ms': round1(t.replayMs),
    'apply ms': round1(t.applyMs),
    'reconcile ms': round1(t.reconcileMs),
    'recovery ms': round1(t.recoveryMs),
    'start(true) ms': round1(t.totalMs),
    'JobMaster CPU ms': round1(t.cpuMs),
    reused: t.partitionsReused,
    released: t.partitionsReleased,
  }));
}

export function printReplayResult(r: ReplayBenchResult, load?: LoadRecord): void {
  console.log(
    `\nReplay + reconcile of ${r.executions} finished executions (${r.events} events, ${r.snapshots} with full snapshots, ` +
      `${(r.logBytes / 1024 / 1024).toFixed(1)} MB in ${r.logFiles} file(s), ${r.subpartitionsPerPartition} subpartitions per partition, ` +
      `consumer parallelism ${r.consumerParallelism}); new JobMaster.start(takeover) against 3 TaskManager processes:`,
  );
  console.table(timingRows(r.runs));
  console.log(
    'Parts timed one by one (ms):',
    Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, round1(v)])),
  );
  // Judged only at a load the machine can carry (bench/load.ts); without a load record, as before.
  const ok = (ms: number, target: number): string =>
    load ? verdictText(judge(ms < target, load), load) : ms < target ? 'met' : 'MISSED';
  console.log(
    `replay + apply + reconcile: cold ${round1(r.cold.recoveryMs)} ms (target < ${r.targetsMs.cold} ms: ${ok(r.cold.recoveryMs, r.targetsMs.cold)}), ` +
      `warm median ${round1(r.warm.recoveryMs)} ms (target < ${r.targetsMs.warm} ms: ${ok(r.warm.recoveryMs, r.targetsMs.warm)})`,
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      executions: { type: 'string', default: '10000' },
      runs: { type: 'string', default: '5' },
      'consumer-parallelism': { type: 'string', default: '0' },
      profile: { type: 'string' },
    },
    strict: true,
  });
  const result = await runReplayBench({
    executions: Number(values.executions),
    runs: Math.max(1, Number(values.runs)),
    consumerParallelism: Number(values['consumer-parallelism']),
    taskManagers: 3,
    stalePerTaskManager: 5,
    ...(values.profile ? { profileDir: values.profile } : {}),
  });
  printReplayResult(result);
}
