import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { errorMessage, isTerminalJobState, type JobStatus__Output, type RecoveryReport__Output } from '@rebound/core';
import { ChaosCluster } from './cluster.js';
import { SLOTS, START_TIMEOUT_MS, TASK_MANAGERS } from './config.js';
import { NO_CRASH_POINTS, describeFault } from './faults.js';
import { injectFault } from './inject.js';
import { poisonedFences } from './inject-forged-rpc.js';
import { JOB_MODULES, checkOutput, describeJob, expectedLines, jobArgs, outputOracle, writeJobInput } from './jobs.js';
import { JobMonitor } from './monitor.js';
import { NetworkCutter } from './partition.js';
import { startEtcdCluster } from '@rebound/ha/testing';
import {
  classifyRecovery,
  countFinishedAtFaults,
  type FaultRecord,
  type Outcome,
  type RecoveryRecord,
  type RunOptions,
  type RunResult,
} from './results.js';
import { RunContext } from './run-context.js';
import { accountRunningTasks, accountTasks, parseTaskEvents, type TaskEvent } from './task-log.js';

export * from './config.js';
export type * from './results.js';

const OUTCOME_ORDER: readonly Outcome[] = [
  'stuck',
  'lost',
  'wrong-output',
  'not-fenced',
  'not-contained',
  'forgery-accepted',
  'rerun-durable',
  'rerun-running',
  'harness-error',
];

function recoveryRecord(r: RecoveryReport__Output): RecoveryRecord {
  return {
    epoch: r.epoch,
    restartedFromScratch: r.restarted_from_scratch,
    reason: r.reason,
    eventsReplayed: r.events_replayed,
    replayMs: r.replay_ms,
    reconnectWaitMs: r.reconnect_wait_ms,
    recoveryMs: r.finished_at_ms > 0 && r.started_at_ms > 0 ? r.finished_at_ms - r.started_at_ms : 0,
    executionsRecovered: r.executions_recovered,
    executionsReset: r.executions_reset,
    partitionsReused: r.partitions_reused,
    partitionsMissing: r.partitions_missing,
    tornTailBytesDiscarded: r.torn_tail_bytes_discarded,
  };
}

async function allTaskEvents(r: RunContext): Promise<TaskEvent[]> {
  const tms = (await r.cluster.processes()).filter((p) => p.role === 'taskmanager');
  const all = await Promise.all(tms.map(async (p) => parseTaskEvents(await r.cluster.log(p.id), p.id)));
  return all.flat().sort((a, b) => a.time - b.time);
}

/**
 * HA settings of a run on etcd. etcd leases count in whole seconds, and keep-alives on a loaded
 * 2-core machine need slack: a 3 s lease (as the etcd integration tests use), calls cut at 2 s.
 */
export function etcdHaConfig(endpoints: string, clusterId: string): Record<string, string> {
  return {
    'high-availability.type': 'etcd',
    'high-availability.etcd.endpoints': endpoints,
    'high-availability.cluster-id': clusterId,
    'high-availability.lease.timeout': '3 s',
    'high-availability.lease.renew-interval': '500 ms',
    'high-availability.etcd.request-timeout': '2 s',
  };
}

/** Runs one planned run to its verdict. Never throws: harness failures become a `harness-error`. */
export async function runOne(opts: RunOptions): Promise<RunResult> {
  const plan = opts.plan;
  const started = Date.now();
  await mkdir(opts.workRoot, { recursive: true });
  const workdir = await mkdtemp(join(opts.workRoot, `seed-${plan.seed}-`));
  const r = new RunContext(opts, workdir);
  const records: FaultRecord[] = plan.faults.map((f) => ({
    kind: f.kind,
    plan: f,
    description: describeFault(f),
    injected: false,
    notes: [],
  }));
  const result: RunResult = {
    run: opts.run,
    seed: plan.seed,
    job: plan.job.job,
    jobDescription: describeJob(plan.job),
    keepRunningTasks: plan.keepRunningTasks,
    ...(plan.shuffleWorkers > 0 ? { shuffle: `remote ${plan.shuffleWorkers}w ${plan.shuffleReplicas}r` } : {}),
    faults: records,
    outcome: 'ok',
    problems: [],
    warnings: r.warnings,
    recoveries: [],
    observedRecoveryMs: [],
    spontaneousFailovers: 0,
    durationMs: 0,
    replay: opts.replayCommand,
  };
  const input = join(workdir, 'input');
  const output = join(workdir, 'output');
  let expected: string[] = [];
  try {
    await writeJobInput(plan.job, input);
    expected = expectedLines(plan.job);
    r.log(
      `${describeJob(plan.job)}; faults: ${records.map((x) => x.description).join(', ')}; keep-running-tasks ${plan.keepRunningTasks ? 'on' : 'off'}${plan.ha === 'etcd' ? '; HA etcd' : ''}${plan.shuffleWorkers > 0 ? `; remote shuffle, ${plan.shuffleWorkers} worker(s), ${plan.shuffleReplicas} replica(s)` : ''}`,
    );
    if (plan.partitions) {
      // Before anything is spawned: daemons and etcd members must join their cgroups at birth.
      r.net = NetworkCutter.create(`${plan.seed}_${opts.run}`);
      r.net.begin();
    }
    if (plan.ha === 'etcd') {
      r.etcd = await startEtcdCluster({
        members: 3,
        baseDir: join(workdir, 'etcd'),
        ...(r.net ? { binary: r.net.etcdWrapper(join(workdir, 'etcd')) } : {}),
      });
      r.haConfig = etcdHaConfig(r.etcd.endpointList, `chaos-${process.pid}-${plan.seed}-${opts.run}`);
      r.log(`etcd: 3 members at ${r.etcd.endpointList}`);
    }
    // jm-1 leads; a crash point is in the cluster's -D values (see clusterConfig), so jm-2 is
    // started on its own with the crash points cleared. Without one, `local up` starts both.
    const separateStandby = plan.faults.some((f) => f.kind === 'crash-point' || f.kind === 'double-failure');
    r.cluster = await ChaosCluster.up(join(workdir, 'cluster'), {
      jobmasters: separateStandby ? 1 : 2,
      taskmanagers: TASK_MANAGERS,
      slots: SLOTS,
      ...(plan.shuffleWorkers > 0 ? { shuffleWorkers: plan.shuffleWorkers } : {}),
      config: r.clusterConfig(),
    });
    if (plan.faults.some((f) => f.kind === 'double-failure')) {
      // The standby that will die in RECONCILING must be up before the leader is killed.
      await r.cluster.startJobMaster({
        id: 'jm-2',
        config: { ...NO_CRASH_POINTS, 'debug.crash.during-reconciling': 'true' },
        timeoutMs: START_TIMEOUT_MS,
      });
    } else if (separateStandby) {
      // The job does not need it: a crash before it is up only makes the job wait for a leader.
      r.background('starting the standby JobMaster jm-2', () =>
        r.cluster.startJobMaster({ id: 'jm-2', config: NO_CRASH_POINTS, timeoutMs: START_TIMEOUT_MS }),
      );
    }

    // A crash point may fire while the job is submitted: watch jm-1 from before submission.
    const crash = plan.faults.findIndex((f) => f.kind === 'crash-point');
    let markReady: () => void = () => {};
    const monitorReady = new Promise<void>((res) => (markReady = res));
    r.submittedAt = Date.now();
    const submission = r.cluster
      .submit(JOB_MODULES[plan.job.job], jobArgs(plan.job, input, output))
      .then((s) => s.jobId);
    let crashWatch: Promise<void> | undefined;
    if (crash >= 0) {
      crashWatch = (async () => {
        r.jobId = await submission.catch(() => '');
        if (!r.jobId) return;
        await monitorReady;
        await injectFault(r, plan.faults[crash]!, records[crash]!, 0);
      })();
    }
    r.jobId = await submission;
    result.jobId = r.jobId;
    r.monitor = new JobMonitor(r.cluster, r.jobId, 100, (c) => r.onEpochChange(c));
    r.monitor.start();
    markReady();
    r.log(`submitted ${r.jobId} (cluster up in ${((r.submittedAt - r.startedAt) / 1000).toFixed(1)} s)`);
    if (crashWatch) await crashWatch;
    else {
      for (let i = 0; i < plan.faults.length; i++) {
        await injectFault(r, plan.faults[i]!, records[i]!, i === 0 ? 0 : r.monitor.finishedTasks());
        await r.settleBackground();
        if (r.monitor.terminal) break;
      }
    }
    await r.settleBackground();

    // The verdict: the job must finish by the deadline with exactly the expected output.
    const deadline = r.submittedAt + opts.deadlineMs;
    await r.monitor.waitFor(
      (s) => s.state !== undefined && isTerminalJobState(s.state),
      Math.max(0, deadline - Date.now()),
    );
    await r.settleBackground();
    const final: JobStatus__Output | undefined = r.monitor.terminal;
    if (!final) {
      const last = r.monitor.latest();
      const notFound = r.monitor.samples.slice(-20).every((s) => s.notFound);
      if (notFound && r.monitor.samples.length >= 20) r.problem('lost', `the leader no longer knows job ${r.jobId}`);
      else
        r.problem(
          'stuck',
          `job ${r.jobId} did not finish within ${opts.deadlineMs} ms (last seen ${last ? `${last.state}, ${last.finished} tasks finished, epoch ${last.epoch}` : 'never'})`,
        );
    } else {
      result.finalState = final.state;
      for (const rep of final.recoveries) result.recoveries.push(recoveryRecord(rep));
      if (final.state !== 'FINISHED') {
        r.problem(
          'lost',
          `job ${r.jobId} ended ${final.state}${final.failure ? `: ${final.failure.split('\n')[0]}` : ''}`,
        );
      } else {
        const sink = final.vertices.at(-1);
        const check = await checkOutput(output, expected, sink?.parallelism, outputOracle(plan.job));
        for (const p of check.problems) r.problem('wrong-output', p);
      }
    }
    // Poison and damaged jobs are judged once the main job ended: they must not have reached it.
    await r.runAfterJobChecks();
    await r.monitor.stop();
    // Finished tasks at each fault and kept vs rerun, from the TaskManager logs.
    const events = await allTaskEvents(r);
    countFinishedAtFaults(records, events, r.jobId, r.submittedAt);
    // The JobMaster's end time, not the monitor's (which polls): a kill just after it is after the end.
    result.recovery = classifyRecovery(
      records,
      r.submittedAt,
      final && final.finished_at_ms > 0 ? final.finished_at_ms : undefined,
    );
    r.log(`job ${final?.state ?? 'not finished'} (${result.recovery}); checking`);

    const holders = plan.shuffleWorkers > 0 ? 'shuffle-worker' : 'taskmanager';
    const acct = accountTasks(events, r.jobId, r.disruptions, r.tmKills, holders);
    result.tasks = acct;
    for (const v of acct.reruns.filter((x) => x.violation)) {
      r.problem(
        'rerun-durable',
        `${v.vertexName} ${v.subtask} attempt ${v.attempt} finished on ${v.taskManagerId} (${holders === 'taskmanager' ? 'which lived' : 'its partition on shuffle workers survived'}), its finished event was durable, yet it ran again after "${v.disruption}"`,
      );
    }
    // keep-running-tasks: what was running at a leader kill or pause carries on where it ran.
    const running = accountRunningTasks(events, r.jobId, r.disruptions, r.tmKills);
    result.runningTasks = running;
    if (plan.keepRunningTasks) {
      for (const v of running.redeploys.filter((x) => x.onLiveTaskManager)) {
        r.problem(
          'rerun-running',
          `${v.vertexName} ${v.subtask.split('#')[1]} attempt ${v.attempt} was running on ${v.taskManagerId} (which lived) at "${v.disruption}", yet it was deployed again instead of adopted (keep-running-tasks on)`,
        );
      }
    }
    // Forged calls must have changed nothing: no task canceled or rerun, no fence raised.
    for (const fg of r.forgeries) {
      for (const v of acct.reruns.filter((x) => x.disruption === fg.label)) {
        r.problem(
          'forgery-accepted',
          `${v.vertexName} ${v.subtask} attempt ${v.attempt} (finished on ${v.taskManagerId}) ran again after "${fg.label}" with no failover`,
        );
      }
      const next = Math.min(Infinity, ...r.disruptions.filter((d) => d.at > fg.at).map((d) => d.at));
      const canceled = events.filter(
        (e) => e.jobId === r.jobId && e.event === 'task.cancel' && e.time >= fg.at && e.time < next,
      );
      if (canceled.length > 0)
        r.problem(
          'forgery-accepted',
          `${canceled.length} task(s) canceled after "${fg.label}" with no failover, e.g. ${canceled[0]!.vertexName} ${canceled[0]!.subtask} on ${canceled[0]!.taskManagerId}`,
        );
      for (const p of await poisonedFences(r, fg.at)) r.problem('forgery-accepted', p);
    }
    // A leader that was stopped and resumed must not act any more.
    for (const fc of r.fencingChecks) {
      const stale = events.filter(
        (e) => e.jobId === r.jobId && e.event === 'task.deploy' && e.epoch === fc.epoch && e.time > fc.resumedAt,
      );
      if (stale.length > 0)
        r.problem('not-fenced', `${fc.id} (epoch ${fc.epoch}) deployed ${stale.length} task(s) after it was resumed`);
      const back = r.monitor.epochChanges.filter((c) => c.at > fc.resumedAt && c.epoch <= fc.epoch);
      if (back.length > 0)
        r.problem('not-fenced', `leader.json went back to epoch ${back[0]!.epoch} after ${fc.id} was resumed`);
    }
    for (const loss of r.leaderLosses) {
      const rec = r.monitor.recoveredAfter(loss.at, loss.epoch);
      if (rec) result.observedRecoveryMs.push(rec.t - loss.at);
    }
    result.spontaneousFailovers = r.spontaneous;
  } catch (err) {
    r.problem('harness-error', errorMessage(err));
  } finally {
    await r.monitor?.stop().catch(() => undefined);
    await r.settleBackground().catch(() => undefined);
    r.net?.end();
    if (r.cluster) await r.cluster.stop().catch(() => r.cluster.killAllSync());
    await r.etcd?.stopAll().catch(() => undefined);
    if (r.net && !(await r.net.removeCgroups())) r.warnings.push(`cgroup ${r.net.root} still in use after the run`);
  }
  for (const p of r.problems) result.problems.push(`${p.outcome}: ${p.message}`);
  result.outcome = OUTCOME_ORDER.find((o) => r.problems.some((p) => p.outcome === o)) ?? 'ok';
  result.durationMs = Date.now() - started;
  if (result.outcome !== 'ok' || opts.keepWorkdir) {
    result.workdir = workdir;
  } else {
    await rm(workdir, { recursive: true, force: true }).catch(() => undefined);
  }
  return result;
}
