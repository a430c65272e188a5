import { type Configuration, ErrorCode, type Logger, PeriodicTask, ReboundError } from '@rebound/core';
import type { LeaderRetrieval, LeaderRetrievalListener } from './ha-services.js';
import { type LeaderInfo, readLeader } from './leader-info.js';
import { LeaderWaiters, isLeaderChange } from './leader-waiters.js';

export type { LeaderRetrievalListener } from './ha-services.js';

export interface LeaderRetrievalServiceOptions {
  readonly haDir: string;
  readonly config: Configuration;
  readonly logger: Logger;
}

/**
 * Follows `<ha>/leader.json` for TaskManagers and CLI clients. A change is reported when the epoch
 * grows, or the same epoch names another address; a record with an older epoch than one already
 * seen is ignored, so followers never go back to a deposed leader.
 */
export class LeaderRetrievalService implements LeaderRetrieval {
  private readonly haDir: string;
  private readonly logger: Logger;
  private readonly pollIntervalMs: number;
  private readonly task: PeriodicTask;
  private listener: LeaderRetrievalListener | undefined;
  private leader: LeaderInfo | undefined;
  private started = false;
  private polling = false;
  private readonly waiters = new LeaderWaiters();
  private lastError: string | undefined;

  constructor(options: LeaderRetrievalServiceOptions) {
    this.haDir = options.haDir;
    this.logger = options.logger.child({ component: 'LeaderRetrievalService' });
    this.pollIntervalMs = options.config.getDurationMs('high-availability.lease.poll-interval');
    this.task = new PeriodicTask(this.pollIntervalMs, () => this.poll(), (err) => this.onPollError(err));
  }

  /** Starts polling (the first poll runs at once). */
  start(listener?: LeaderRetrievalListener): void {
    if (this.started) return;
    this.started = true;
    this.listener = listener;
    this.ensurePolling();
  }

  stop(): void {
    this.started = false;
    this.listener = undefined;
    this.updatePolling();
  }

  /** The newest leader seen so far. */
  current(): LeaderInfo | undefined {
    return this.leader;
  }

  /**
   * The current leader, waiting up to `timeoutMs` for one to be elected. Polls by itself when the
   * service was not started.
   */
  async waitForLeader(timeoutMs: number): Promise<LeaderInfo> {
    if (this.leader) return this.leader;
    return this.waiters.wait(
      timeoutMs,
      () =>
        new ReboundError(
          ErrorCode.LEADER_NOT_FOUND,
          `no JobMaster leader in ${this.haDir} after ${timeoutMs} ms${this.lastError ? ` (${this.lastError})` : ''}; check that a JobMaster runs with --ha-dir ${this.haDir}`,
        ),
      () => this.ensurePolling(),
      () => this.updatePolling(),
    );
  }

  private ensurePolling(): void {
    if (this.polling) return;
    this.polling = true;
    this.task.start(true);
  }

  private updatePolling(): void {
    if (this.polling && !this.started && this.waiters.size === 0) {
      this.polling = false;
      this.task.stop();
    }
  }

  /** Reads leader.json now (as a poll would, notifying on a change) and returns the newest leader. */
  async refresh(): Promise<LeaderInfo | undefined> {
    await this.poll();
    return this.leader;
  }

  private async poll(): Promise<void> {
    const info = await readLeader(this.haDir);
    this.lastError = undefined;
    if (!info) return;
    const prev = this.leader;
    if (!isLeaderChange(prev, info)) return;
    this.leader = info;
    this.logger.info({ epoch: info.epoch, address: info.address, jobmasterId: info.jobmasterId }, 'leader changed');
    this.waiters.resolve(info);
    const listener = this.listener;
    if (listener) {
      try {
        await listener.onLeaderChange(info);
      } catch (err) {
        this.logger.error({ err }, 'onLeaderChange failed');
      }
    }
  }

  private onPollError(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    // Logged once per distinct problem: a poll every second would otherwise flood the log.
    if (message !== this.lastError) this.logger.warn({ err }, 'cannot read leader.json');
    this.lastError = message;
  }
}
