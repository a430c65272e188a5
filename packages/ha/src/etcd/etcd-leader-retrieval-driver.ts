import type { Watcher } from 'etcd3';
import type { Logger } from '@rebound/core';
import { DefaultLeaderRetrievalService } from '../default-leader-retrieval-service.js';
import type { LeaderInfo } from '../leader-info.js';
import type { LeaderRetrievalDriver, LeaderRetrievalDriverEvents } from '../leader-retrieval-driver.js';
import type { EtcdConnection } from './etcd-connection.js';
import { leaderFromKv } from './etcd-leader-record.js';

/** A DefaultLeaderRetrievalService that follows `/<cluster-id>/leader` by watch. */
export function createEtcdLeaderRetrievalService(
  conn: EtcdConnection,
  logger: Logger,
  retryIntervalMs: number,
): DefaultLeaderRetrievalService {
  return new DefaultLeaderRetrievalService(
    new EtcdLeaderRetrievalDriver(conn, retryIntervalMs),
    logger.child({ component: 'EtcdLeaderRetrievalService' }),
  );
}

/**
 * Follows `/<cluster-id>/leader` with an etcd watch; the epoch is the key's create revision. The
 * watch is opened first and the key read once after, so nothing between the two is missed.
 */
export class EtcdLeaderRetrievalDriver implements LeaderRetrievalDriver {
  readonly followFailure = 'cannot follow the leader key in etcd';
  private events: LeaderRetrievalDriverEvents | undefined;
  private watcher: Watcher | undefined;
  private watching: Promise<void> | undefined;
  /** Reads of the leader key while the watch is disconnected (see watchDisconnected). */
  private pollTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly conn: EtcdConnection,
    private readonly retryIntervalMs: number,
  ) {}

  async read(): Promise<LeaderInfo | undefined> {
    const { kv } = await this.conn.get(this.conn.keys.leader);
    return kv ? leaderFromKv(kv) : undefined;
  }

  follow(events: LeaderRetrievalDriverEvents): void {
    this.events = events;
    void this.ensureWatching();
  }

  unfollow(): void {
    this.events = undefined;
    this.stopPolling();
    const w = this.watcher;
    this.watcher = undefined;
    void w?.cancel().catch(() => undefined);
  }

  noLeaderMessage(timeoutMs: number, lastError: string | undefined): string {
    return `no JobMaster leader at ${this.conn.keys.leader} in ${this.conn.describe()} after ${timeoutMs} ms${lastError ? ` (${lastError})` : ''}; check that a JobMaster runs with the same high-availability.etcd.endpoints and high-availability.cluster-id`;
  }

  private ensureWatching(): Promise<void> {
    if (this.watcher || !this.events) return Promise.resolve();
    this.watching ??= (async () => {
      try {
        const key = this.conn.keys.leader;
        const watcher = await this.conn.call('watching', key, () => this.conn.client.watch().key(key).create());
        if (!this.events) {
          await watcher.cancel().catch(() => undefined);
          return;
        }
        this.watcher = watcher;
        watcher.on('put', (kv) => {
          try {
            this.events?.offer(leaderFromKv(kv));
          } catch (err) {
            this.events?.error(err);
          }
        });
        // A reconnected watch resumes from its last revision; one read covers a compacted history.
        watcher.on('connected', () => {
          this.stopPolling();
          void this.events?.refresh().catch((err: unknown) => this.events?.error(err));
        });
        watcher.on('disconnected', (err) => {
          this.events?.error(err);
          this.watchDisconnected();
        });
        watcher.on('error', (err) => this.events?.error(err));
        await this.events.refresh();
      } catch (err) {
        this.events?.error(err);
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
    if (this.pollTimer || !this.events) return;
    const tick = (): void => {
      if (!this.pollTimer) return;
      void (this.events?.refresh() ?? Promise.resolve())
        .catch((err: unknown) => this.events?.error(err))
        .finally(() => {
          if (this.pollTimer && this.events) this.pollTimer = setTimeout(tick, this.retryIntervalMs).unref();
          else this.stopPolling();
        });
    };
    this.pollTimer = setTimeout(tick, this.retryIntervalMs).unref();
  }

  private stopPolling(): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = undefined;
  }
}
