import { join } from 'node:path';
import { errorMessage, isTerminalJobState, parseDuration, sleep } from '@rebound/core';
import { dumpJobEvents, jobEventsDir, listEventFiles, type JobEventsDump } from '@rebound/event-store';
import type { EtcdCluster } from '@rebound/ha/testing';
import type { ChaosCluster } from './cluster.js';
import { CHAOS_CONFIG, PAUSE_REGISTRATION_TIMEOUT_MS, START_TIMEOUT_MS } from './config.js';
import { NO_CRASH_POINTS, crashPointConfig } from './faults.js';
import type { EpochChange, JobMonitor } from './monitor.js';
import type { NetworkCutter } from './partition.js';
import type { RunPlan } from './plan.js';
import type { Outcome, RunOptions } from './results.js';
import { subtaskKey, type Disruption } from './task-log.js';

/** subtaskKey → attempt of the last finished event of each subtask in a dump (resets applied). */
export function finishedInDump(dump: JobEventsDump): Map<string, number> {
  const finished = new Map<string, number>();
  for (const r of dump.events) {
    if (r.type === 'ExecutionVertexFinished')
      finished.set(subtaskKey(r.event.vertex_id, r.event.subtask), r.event.attempt);
    else if (r.type === 'ExecutionVertexReset')
      for (const v of r.event.vertices) finished.delete(subtaskKey(v.vertex_id, v.subtask));
  }
  return finished;
}

/**
 * The state of one run while it runs: its cluster and job, what the harness did to which process
 * and when (disruptions, kills), background restarts, and the problems found so far.
 */
export class RunContext {
  cluster!: ChaosCluster;
  monitor!: JobMonitor;
  jobId = '';
  submittedAt = 0;
  readonly disruptions: Disruption[] = [];
  readonly tmKills: { id: string; at: number }[] = [];
  /** JobMasters the harness killed or stopped, and when: a leader change without one is spontaneous. */
  readonly jmDisturbed: { id: string; at: number }[] = [];
  readonly leaderLosses: { at: number; epoch: number }[] = [];
  private readonly pending: Promise<void>[] = [];
  readonly problems: { outcome: Outcome; message: string }[] = [];
  readonly warnings: string[] = [];
  readonly fencingChecks: { epoch: number; resumedAt: number; id: string }[] = [];
  /** Forged-call bursts: after the job, nothing may have been canceled or rerun because of them. */
  readonly forgeries: { at: number; label: string; leaderEpoch: number }[] = [];
  /** Checks of a fault that can only be judged once the job ended (see runAfterJobChecks). */
  private readonly afterJob: { what: string; check: () => Promise<void> }[] = [];
  spontaneous = 0;
  readonly startedAt = Date.now();
  /** The run's own etcd cluster (`--ha etcd`). */
  etcd: EtcdCluster | undefined;
  /** Cuts daemons and etcd members off the network (`--partitions`). */
  net: NetworkCutter | undefined;
  /** HA settings of the run's backend, on top of CHAOS_CONFIG. */
  haConfig: Record<string, string> = {};

  constructor(
    readonly opts: RunOptions,
    readonly workdir: string,
  ) {}

  get plan(): RunPlan {
    return this.opts.plan;
  }

  /** high-availability.lease.timeout of the run. */
  get leaseMs(): number {
    return parseDuration(
      this.haConfig['high-availability.lease.timeout'] ?? CHAOS_CONFIG['high-availability.lease.timeout']!,
      'high-availability.lease.timeout',
    );
  }

  log(line: string): void {
    this.opts.log?.(
      `[run ${this.opts.run} seed ${this.plan.seed} +${((Date.now() - this.startedAt) / 1000).toFixed(1)}s] ${line}`,
    );
  }

  problem(outcome: Outcome, message: string): void {
    this.problems.push({ outcome, message });
    this.log(`PROBLEM (${outcome}): ${message}`);
  }

  clusterConfig(): Record<string, string> {
    const config: Record<string, string> = {
      ...CHAOS_CONFIG,
      ...this.haConfig,
      'execution.batch.job-recovery.snapshot.min-pause': this.plan.snapshotMinPause,
      'execution.batch.job-recovery.keep-running-tasks': String(this.plan.keepRunningTasks),
    };
    if (this.plan.shuffleWorkers > 0) {
      config['shuffle.type'] = 'remote';
      config['shuffle.remote.replicas'] = String(this.plan.shuffleReplicas);
    }
    if (this.plan.faults.some((f) => f.kind === 'jobmasters-pause'))
      config['taskmanager.registration.timeout'] = `${PAUSE_REGISTRATION_TIMEOUT_MS} ms`;
    // jm-1, started by `local up`, leads: the crash point goes into the cluster's configuration
    // and every JobMaster started later clears it (NO_CRASH_POINTS).
    const cp = this.plan.faults.find((f) => f.kind === 'crash-point');
    if (cp?.kind === 'crash-point') Object.assign(config, crashPointConfig(cp.point));
    return config;
  }

  /** Runs `work` in the background; a failure is a harness error of the run. */
  background(what: string, work: () => Promise<unknown>): void {
    this.pending.push(
      work().then(
        () => undefined,
        (err: unknown) => this.problem('harness-error', `${what}: ${errorMessage(err)}`),
      ),
    );
  }

  /** Runs `check` once the job ended (or its deadline passed); a throw is a harness error. */
  checkAfterJob(what: string, check: () => Promise<void>): void {
    this.afterJob.push({ what, check });
  }

  async runAfterJobChecks(): Promise<void> {
    for (const { what, check } of this.afterJob.splice(0)) {
      await check().catch((err: unknown) => this.problem('harness-error', `${what}: ${errorMessage(err)}`));
    }
  }

  async settleBackground(): Promise<void> {
    while (this.pending.length > 0) await this.pending.shift();
  }

  restartJobMaster(id: string, extra: Record<string, string> = {}): void {
    this.background(`restarting JobMaster ${id}`, () =>
      this.cluster.startJobMaster({ id, config: { ...NO_CRASH_POINTS, ...extra }, timeoutMs: START_TIMEOUT_MS }),
    );
  }

  restartTaskManager(id: string): void {
    this.background(`restarting TaskManager ${id}`, () =>
      this.cluster.startTaskManager({ id, wait: false, timeoutMs: START_TIMEOUT_MS }),
    );
  }

  async dump(): Promise<JobEventsDump | undefined> {
    if (!this.jobId) return undefined;
    return dumpJobEvents(this.cluster.haDir, this.jobId).catch(() => undefined);
  }

  /** Replaces a recorded disruption (more is known about it after the fact). */
  amend(old: Disruption, next: Disruption): void {
    const i = this.disruptions.indexOf(old);
    if (i >= 0) this.disruptions[i] = next;
    else this.disruptions.push(next);
  }

  async disrupt(
    label: string,
    at: number,
    extra: Omit<Disruption, 'at' | 'label' | 'durableFinished'> = {},
    dump?: JobEventsDump,
  ): Promise<Disruption> {
    const d = dump ?? (await this.dump());
    const disruption: Disruption = { at, label, durableFinished: d ? finishedInDump(d) : new Map(), ...extra };
    this.disruptions.push(disruption);
    return disruption;
  }

  async aliveJobMasters(): Promise<string[]> {
    const out: string[] = [];
    for (const id of await this.cluster.jobMasterIds()) if (await this.cluster.isAlive(id)) out.push(id);
    return out;
  }

  /** SIGKILLs the leader; the time and the event log right after are recorded. */
  async killLeader(
    label: string,
  ): Promise<{ id: string; epoch: number; at: number; disruption: Disruption } | undefined> {
    const leader = await this.cluster.leader();
    if (!leader || !(await this.cluster.isAlive(leader.jobmasterId))) return undefined;
    await this.cluster.signal(leader.jobmasterId, 'SIGKILL');
    const at = Date.now();
    this.jmDisturbed.push({ id: leader.jobmasterId, at });
    this.leaderLosses.push({ at, epoch: leader.epoch });
    const disruption = await this.disrupt(`${label}: SIGKILL ${leader.jobmasterId} (epoch ${leader.epoch})`, at);
    this.log(`killed leader ${leader.jobmasterId} (epoch ${leader.epoch})`);
    return { id: leader.jobmasterId, epoch: leader.epoch, at, disruption };
  }

  async stopJobMasters(ids: readonly string[]): Promise<void> {
    for (const id of ids) {
      if (await this.cluster.signal(id, 'SIGSTOP')) this.jmDisturbed.push({ id, at: Date.now() });
    }
  }

  async contJobMasters(ids: readonly string[]): Promise<void> {
    for (const id of ids) await this.cluster.signal(id, 'SIGCONT').catch(() => false);
  }

  async killTaskManager(id: string, label: string): Promise<boolean> {
    if (!(await this.cluster.signal(id, 'SIGKILL'))) return false;
    const at = Date.now();
    this.tmKills.push({ id, at });
    await this.disrupt(`${label}: SIGKILL ${id}`, at);
    this.log(`killed TaskManager ${id}`);
    return true;
  }

  restartShuffleWorker(id: string, afterMs = 0): void {
    this.background(`restarting shuffle worker ${id}`, async () => {
      await sleep(afterMs);
      await this.cluster.startShuffleWorker({ id, wait: false, timeoutMs: START_TIMEOUT_MS });
    });
  }

  /** Waits until the job's finished tasks reach `baseline + k`, then `delayMs`. False if it ended first. */
  async awaitTrigger(baseline: number, t: { afterFinishedTasks: number; delayMs: number }): Promise<boolean> {
    if (t.afterFinishedTasks > 0) {
      const ok = await this.monitor.waitFor(
        (s) => (s.finished ?? -1) >= baseline + t.afterFinishedTasks,
        this.opts.deadlineMs,
      );
      if (!ok) return false;
    } else {
      const ok = await this.monitor.waitFor((s) => s.state === 'RUNNING', this.opts.deadlineMs);
      if (!ok) return false;
    }
    await sleep(t.delayMs);
    return !this.monitor.terminal;
  }

  /** Waits until a leader newer than `epoch` runs the job (or it ended). */
  async awaitRecovery(epoch: number, timeoutMs = 120_000): Promise<boolean> {
    return this.monitor.waitFor(
      (s) =>
        s.state !== undefined && (isTerminalJobState(s.state) || (s.state === 'RUNNING' && (s.epoch ?? 0) > epoch)),
      timeoutMs,
    );
  }

  async newestEventFile(): Promise<string | undefined> {
    const dir = jobEventsDir(this.cluster.haDir, this.jobId);
    const files = await listEventFiles(dir);
    const last = files.at(-1);
    return last ? join(dir, last.name) : undefined;
  }

  onEpochChange(c: EpochChange): void {
    const prev = c.previous;
    if (!prev) return;
    // A leader change nobody caused: the previous leader was neither killed nor stopped since it was elected.
    const electedAt = [...this.monitor.epochChanges].reverse().find((e) => e.epoch === prev.epoch)?.at ?? 0;
    const caused = this.jmDisturbed.some((d) => d.id === prev.jobmasterId && d.at >= electedAt - 1_000 && d.at <= c.at);
    if (caused) return;
    this.spontaneous++;
    this.warnings.push(
      `spontaneous failover: ${prev.jobmasterId} (epoch ${prev.epoch}) lost leadership to ${c.jobmasterId} (epoch ${c.epoch}) without a fault`,
    );
    this.leaderLosses.push({ at: c.at, epoch: prev.epoch });
    void this.disrupt(`spontaneous failover to epoch ${c.epoch}`, c.at);
  }
}
