import type { JobStatus__Output } from '@rebound/core';
import { ErrorCode, ReboundError, errorMessage, isTerminalJobState, sleep } from '@rebound/core';
import type { ChaosCluster } from './cluster.js';

/** One look at the job, as the leader of the moment answered (or why nobody did). */
export interface Sample {
  readonly t: number;
  readonly state?: string;
  /** Epoch of the leader that answered. */
  readonly epoch?: number;
  /** Finished tasks over all vertices. */
  readonly finished?: number;
  readonly error?: string;
  readonly notFound?: boolean;
}

/** A leader change seen in leader.json. */
export interface EpochChange {
  readonly at: number;
  readonly epoch: number;
  readonly jobmasterId: string;
  readonly previous?: { readonly epoch: number; readonly jobmasterId: string };
}

/**
 * Polls the job's status and leader.json in the background. Fault triggers and recovery times
 * are read from its samples; nothing here sleeps to let things settle.
 */
export class JobMonitor {
  readonly samples: Sample[] = [];
  readonly epochChanges: EpochChange[] = [];
  last: JobStatus__Output | undefined;
  terminal: JobStatus__Output | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private waiters: (() => void)[] = [];

  constructor(
    private readonly cluster: ChaosCluster,
    readonly jobId: string,
    private readonly intervalMs = 100,
    private readonly onEpochChange?: (c: EpochChange) => void,
  ) {}

  start(): void {
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeAll();
    await this.loop;
  }

  private wakeAll(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.pollLeader();
      await this.pollStatus();
      this.wakeAll();
      if (this.terminal) {
        // Keep watching leader.json a little: the run may still restart processes.
        await sleep(this.intervalMs * 3);
      } else {
        await sleep(this.intervalMs);
      }
    }
  }

  private async pollLeader(): Promise<void> {
    const l = await this.cluster.leader();
    if (!l) return;
    const prev = this.epochChanges.at(-1);
    if (prev && prev.epoch === l.epoch) return;
    const change: EpochChange = {
      at: Date.now(),
      epoch: l.epoch,
      jobmasterId: l.jobmasterId,
      ...(prev ? { previous: { epoch: prev.epoch, jobmasterId: prev.jobmasterId } } : {}),
    };
    this.epochChanges.push(change);
    if (prev) this.onEpochChange?.(change);
  }

  private async pollStatus(): Promise<void> {
    if (this.terminal) return;
    const t = Date.now();
    try {
      const s = await this.cluster.jobStatus(this.jobId);
      this.last = s;
      const finished = s.vertices.reduce((n, v) => n + (v.tasks?.finished ?? 0), 0);
      this.samples.push({ t, state: s.state, epoch: s.leader_epoch, finished });
      if (isTerminalJobState(s.state)) this.terminal = s;
    } catch (err) {
      const notFound = err instanceof ReboundError && err.code === ErrorCode.JOB_NOT_FOUND;
      this.samples.push({ t, error: errorMessage(err), ...(notFound ? { notFound } : {}) });
    }
  }

  latest(): Sample | undefined {
    for (let i = this.samples.length - 1; i >= 0; i--) if (this.samples[i]!.state !== undefined) return this.samples[i];
    return undefined;
  }

  finishedTasks(): number {
    return this.latest()?.finished ?? 0;
  }

  /** Waits for the next sample (or the monitor to stop). */
  private next(): Promise<void> {
    return new Promise((r) => this.waiters.push(r));
  }

  /**
   * Waits until a sample taken after now satisfies `pred`. False when the job ended first
   * (unless `pred` accepts the terminal sample), the monitor stopped, or `timeoutMs` passed.
   */
  async waitFor(pred: (s: Sample) => boolean, timeoutMs: number): Promise<boolean> {
    const from = Date.now();
    let seen = this.samples.length;
    let timedOut = false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((r) => {
      timer = setTimeout(() => {
        timedOut = true;
        r();
      }, timeoutMs);
    });
    try {
      while (!this.stopped && !timedOut) {
        for (; seen < this.samples.length; seen++) {
          const s = this.samples[seen]!;
          if (s.t >= from && pred(s)) return true;
        }
        if (this.terminal) return false;
        await Promise.race([this.next(), timeout]);
      }
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  /** The first sample at or after `t` in which the job runs (or ended) under a leader newer than `epoch`. */
  recoveredAfter(t: number, epoch: number): Sample | undefined {
    return this.samples.find(
      (s) =>
        s.t >= t &&
        s.state !== undefined &&
        (s.epoch ?? 0) > epoch &&
        (s.state === 'RUNNING' || isTerminalJobState(s.state)),
    );
  }
}
