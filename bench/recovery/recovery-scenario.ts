/**
 * One job of the recovery benchmark (run.ts) on a fresh local cluster: without failure, or with
 * the leader SIGKILLed at a fraction of the no-failure time and recovery on or off; its figures
 * come from the job's status, the event log copied at the kill, and the daemons' logs.
 */
import { cp, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RecoveryReport__Output } from '@rebound/core';
import { jobEventsDir } from '@rebound/event-store';
import { FileJobGraphStore } from '@rebound/ha';
import { BenchCluster, FAST_FAILOVER_CONFIG, ROOT, type KilledLeader } from './cluster.js';
import { durableFinished } from './event-log.js';
import {
  firstStatus,
  jobFigures,
  killFigures,
  statusAt,
  waitForJobEnd,
  waitForNewLeader,
  withFreshCluster,
  type KillFigures,
} from './failover-run.js';
import { load1 } from './quiet-machine.js';
import { analyseReexecution, lostWorkPerSlot, ofNewLeader, type Reexecution } from './reexecution.js';
import type { Options } from './run-options.js';

const JOB_FILE = join(ROOT, 'bench/recovery/job.ts');

/** The tests' short timeouts plus what the issue asks for. */
export const BASE_CONFIG: Readonly<Record<string, string>> = {
  ...FAST_FAILOVER_CONFIG,
  'job-event.store.write-buffer.flush-interval': '100 ms',
  'execution.batch.job-recovery.previous-worker.recovery.timeout': '5 s',
};

export type Scenario = 'no-failure' | 'recovery-on' | 'recovery-off';

export interface ScenarioResult {
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

export async function runScenario(
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
