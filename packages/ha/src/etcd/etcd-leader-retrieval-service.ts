import type { Watcher } from 'etcd3';
import { ErrorCode, errorMessage, type Logger, ReboundError } from '@rebound/core';
import type { LeaderRetrieval, LeaderRetrievalListener } from '../ha-services.js';
import type { LeaderInfo } from '../leader-info.js';
import { LeaderWaiters, isLeaderChange } from '../leader-waiters.js';
import type { EtcdConnection } from './etcd-connection.js';
import { leaderFromKv } from './etcd-leader-record.js';

/**
 * Follows `/<cluster-id>/leader` with an etcd watch, for TaskManagers and clients. As with the file
 * backend, a change is reported when the epoch (the key's create revision) grows, or the same epoch
 * names another address; an older epoch is never gone back to.
 */
export class EtcdLeaderRetrievalService implements LeaderRetrieval {
  private readonly logger: Logger;
  private listener: LeaderRetrievalListener | undefined;
  private leader: LeaderInfo | undefined;
  private started = false;
  private watcher: Watcher | undefined;
  private watching: Promise<void> | undefined;
  private readonly waiters = new LeaderWaiters();
  private lastError: string | undefined;
  /** Reads of the leader key while the watch is disconnected (see watchDisconnected). */
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly conn: EtcdConnection,
    logger: Logger,
    private readonly retryIntervalMs: number,
  ) {
    this.logger = logger.child({ component: 'EtcdLeaderRetrievalService' });
  }

  start(listener?: LeaderRetrievalListener): void {
    if (this.started) return;
    this.started = true;
    this.listener = listener;
    void this.ensureWatching();
  }

  stop(): void {
    this.started = false;
    this.listener = undefined;
    this.updateWatching();
  }

  current(): LeaderInfo | undefined {
    return this.leader;
  }

  async waitForLeader(timeoutMs: number): Promise<LeaderInfo> {
    if (this.leader) return this.leader;
    return this.waiters.wait(
      timeoutMs,
      () =>
        new ReboundError(
          ErrorCode.LEADER_NOT_FOUND,
          `no JobMaster leader at ${this.conn.keys.leader} in ${this.conn.describe()} after ${timeoutMs} ms${this.lastError ? ` (${this.lastError})` : ''}; check that a JobMaster runs with the same high-availability.etcd.endpoints and high-availability.cluster-id`,
        ),
      () => void this.ensureWatching(),
      () => this.updateWatching(),
    );
  }

  async refresh(): Promise<LeaderInfo | undefined> {
    const { kv } = await this.conn.get(this.conn.keys.leader);
    if (kv) await this.offer(leaderFromKv(kv));
    return this.leader;
  }

  private wanted(): boolean {
    return this.started || this.waiters.size > 0;
  }

  /** Opens the watch (then reads the key once, so nothing between the two is missed). */
  private ensureWatching(): Promise<void> {
    if (this.watcher || !this.wanted()) return Promise.resolve();
    this.watching ??= (async () => {
      try {
        const key = this.conn.keys.leader;
        const watcher = await this.conn.call('watching', key, () => this.conn.client.watch().key(key).create());
        if (!this.wanted()) {
          await watcher.cancel().catch(() => undefined);
          return;
        }
        this.watcher = watcher;
        watcher.on('put', (kv) => {
          try {
            void this.offer(leaderFromKv(kv));
          } catch (err) {
            this.noteError(err);
          }
        });
        // A reconnected watch resumes from its last revision; one read covers a compacted history.
        watcher.on('connected', () => {
          this.stopPolling();
          void this.refresh().catch((err: unknown) => this.noteError(err));
        });
        watcher.on('disconnected', (err) => {
          this.noteError(err);
          this.watchDisconnected();
        });
        watcher.on('error', (err) => this.noteError(err));
        await this.refresh();
      } catch (err) {
        this.noteError(err);
        if (!this.watcher) setTimeout(() => void this.ensureWatching(), this.retryIntervalMs).unref();
      } finally {
        this.watching = undefined;
      }
    })();
    return this.watching;
  }

  /**
   * etcd3 reconnects a broken watch with a backoff that grows to several seconds, so after an etcd
   * outage the watch can stay down while a leader is elected again: reading the key every
   * `high-availability.lease.poll-interval` meanwhile keeps TaskManagers from following a leader
   * record that is seconds out of date.
   */
  private watchDisconnected(): void {
    if (this.pollTimer || !this.wanted()) return;
    const tick = (): void => {
      if (!this.pollTimer) return;
      void this.refresh()
        .catch((err: unknown) => this.noteError(err))
        .finally(() => {
          if (this.pollTimer && this.wanted()) this.pollTimer = setTimeout(tick, this.retryIntervalMs).unref();
          else this.stopPolling();
        });
    };
    this.pollTimer = setTimeout(tick, this.retryIntervalMs).unref();
  }

  private stopPolling(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }

  private updateWatching(): void {
    if (!this.wanted()) this.stopPolling();
    if (this.watcher && !this.wanted()) {
      const w = this.watcher;
      this.watcher = undefined;
      void w.cancel().catch(() => undefined);
    }
  }

  private noteError(err: unknown): void {
    const message = errorMessage(err).split('\n')[0] ?? '';
    if (message !== this.lastError) this.logger.warn({ err: message }, 'cannot follow the leader key in etcd');
    this.lastError = message;
  }

  private async offer(info: LeaderInfo): Promise<void> {
    this.lastError = undefined;
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
}
