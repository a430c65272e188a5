import { errorMessage, LeaderNotFoundError, type Logger } from '@rebound/core';
import type { LeaderRetrieval, LeaderRetrievalListener } from './ha-services.js';
import type { LeaderInfo } from './leader-info.js';
import type { LeaderRetrievalDriver } from './leader-retrieval-driver.js';
import { LeaderWaiters, isLeaderChange } from './leader-waiters.js';

/**
 * Follows the leader for TaskManagers and CLI clients over a LeaderRetrievalDriver (Flink's
 * DefaultLeaderRetrievalService). A change is reported when the epoch grows, or the same epoch
 * names another address; a record with an older epoch than one already seen is ignored, so
 * followers never go back to a deposed leader. The record is followed while the service is
 * started or someone waits for a leader.
 */
export class DefaultLeaderRetrievalService implements LeaderRetrieval {
  private listener: LeaderRetrievalListener | undefined;
  private leader: LeaderInfo | undefined;
  private started = false;
  private following = false;
  private readonly waiters = new LeaderWaiters();
  private lastError: string | undefined;

  constructor(
    private readonly driver: LeaderRetrievalDriver,
    private readonly logger: Logger,
  ) {}

  /** Starts following (the first read runs at once). */
  start(listener?: LeaderRetrievalListener): void {
    if (this.started) return;
    this.started = true;
    this.listener = listener;
    this.ensureFollowing();
  }

  stop(): void {
    this.started = false;
    this.listener = undefined;
    this.updateFollowing();
  }

  /** The newest leader seen so far. */
  current(): LeaderInfo | undefined {
    return this.leader;
  }

  /** The current leader, waiting up to `timeoutMs` for one; follows by itself when not started. */
  async waitForLeader(timeoutMs: number): Promise<LeaderInfo> {
    if (this.leader) return this.leader;
    return this.waiters.wait(
      timeoutMs,
      () => new LeaderNotFoundError(this.driver.noLeaderMessage(timeoutMs, this.lastError)),
      () => this.ensureFollowing(),
      () => this.updateFollowing(),
    );
  }

  /** Reads the record now (notifying on a change) and returns the newest leader. */
  async refresh(): Promise<LeaderInfo | undefined> {
    const info = await this.driver.read();
    this.lastError = undefined;
    if (info) await this.offer(info);
    return this.leader;
  }

  private ensureFollowing(): void {
    if (this.following) return;
    this.following = true;
    this.driver.follow({
      refresh: () => this.refresh(),
      offer: (info) => void this.offer(info),
      error: (err) => this.noteError(err),
    });
  }

  private updateFollowing(): void {
    if (this.following && !this.started && this.waiters.size === 0) {
      this.following = false;
      this.driver.unfollow();
    }
  }

  private noteError(err: unknown): void {
    const message = errorMessage(err).split('\n')[0] ?? '';
    // Logged once per distinct problem: a poll every second would otherwise flood the log.
    if (message !== this.lastError) this.logger.warn({ err: message }, this.driver.followFailure);
    this.lastError = message;
  }

  private async offer(info: LeaderInfo): Promise<void> {
    this.lastError = undefined;
    if (!isLeaderChange(this.leader, info)) return;
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
}
