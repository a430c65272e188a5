import { performance } from 'node:perf_hooks';
import type { IKeyValue, Lease, Watcher } from 'etcd3';
import { type Clock, type Configuration, errorMessage, IllegalStateError, type Logger, systemClock } from '@rebound/core';
import type { LeaderContender, LeaderElection } from '../ha-services.js';
import type { EtcdConnection } from './etcd-connection.js';
import { encodeLeaderValue, leaderFromKv } from './etcd-leader-record.js';
import { PreviousLeaderObserver } from './previous-leader-observer.js';

type State = 'idle' | 'running' | 'stopped';

export interface EtcdLeaderElectionOptions {
  readonly connection: EtcdConnection;
  readonly contenderId: string;
  readonly address: string;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/**
 * Leader election through etcd: a lease of `high-availability.lease.timeout` and a transaction that
 * creates `/<cluster-id>/leader` only if it does not exist (create revision 0), attached to the
 * lease. The epoch is the key's create revision: etcd revisions only grow, so every election yields
 * a larger epoch, and "the key still has create revision E" is exactly "E still leads".
 *
 * Leadership ends, locally and at once, when a keep-alive says the lease is gone, when no keep-alive
 * has succeeded for long enough that the lease may expire in etcd (judged on this process's own
 * monotonic clock, from when the last successful keep-alive was sent: etcd starts its TTL later
 * than that), when the watch sees the key deleted or replaced, or when a guarded write is refused.
 * Standbys watch the key and campaign when it is deleted; nothing polls.
 */
export class EtcdLeaderElectionService implements LeaderElection {
  private readonly conn: EtcdConnection;
  private readonly contenderId: string;
  private readonly address: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly renewIntervalMs: number;
  private readonly retryIntervalMs: number;
  /** How long before the lease's earliest possible expiry in etcd leadership is given up. */
  private readonly marginMs: number;

  private state: State = 'idle';
  private contender: LeaderContender | undefined;
  private watcher: Watcher | undefined;
  private lease: Lease | undefined;
  private epoch: number | undefined;
  /** performance.now() before which the lease cannot have expired in etcd (minus the margin). */
  private validUntil = 0;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private campaigning: Promise<void> | undefined;
  private campaignAgain = false;
  private callbacks: Promise<void> = Promise.resolve();
  private lastHolder: string | undefined;
  private lastError: string | undefined;
  /**
   * Leases whose revocation failed (etcd unreachable). A restarted etcd extends every lease by its
   * TTL, so one of them may keep an old leader key alive: revoked at the next campaign.
   */
  private readonly unrevoked = new Set<Lease>();
  private readonly previousLeader = new PreviousLeaderObserver();
  private grantedAfterExpiryLastHeardMs: number | undefined;

  constructor(o: EtcdLeaderElectionOptions) {
    this.conn = o.connection;
    this.contenderId = o.contenderId;
    this.address = o.address;
    this.clock = o.clock ?? systemClock;
    this.logger = o.logger.child({ component: 'EtcdLeaderElectionService', contenderId: o.contenderId });
    this.ttlMs = o.config.getDurationMs('high-availability.lease.timeout');
    this.renewIntervalMs = Math.min(o.config.getDurationMs('high-availability.lease.renew-interval'), Math.max(1, Math.floor(this.ttlMs / 3)));
    this.retryIntervalMs = o.config.getDurationMs('high-availability.lease.poll-interval');
    this.marginMs = Math.min(this.renewIntervalMs, Math.floor(this.ttlMs / 4));
  }

  async start(contender: LeaderContender): Promise<void> {
    if (this.state !== 'idle') throw new IllegalStateError('EtcdLeaderElectionService can be started only once');
    this.contender = contender;
    this.state = 'running';
    await this.campaign();
  }

  hasLeadership(): boolean {
    return this.epoch !== undefined && performance.now() < this.validUntil;
  }

  currentEpoch(): number | undefined {
    return this.hasLeadership() ? this.epoch : undefined;
  }

  /**
   * When this leadership followed a leader key that expired (rather than one revoked by a leader
   * stepping down): the moment this process saw it go, on its own clock, minus the old lease's TTL,
   * which is when etcd last accepted a keep-alive from the old leader, give or take etcd's expiry
   * check interval (500 ms) and the watch's delivery. No other host's clock is involved.
   */
  previousLeaderLastHeardMs(): number | undefined {
    return this.grantedAfterExpiryLastHeardMs;
  }

  async confirmLeadership(): Promise<boolean> {
    const epoch = this.epoch;
    if (epoch === undefined || this.state !== 'running') return false;
    try {
      const { kv } = await this.conn.get(this.conn.keys.leader);
      if (!kv || Number(kv.create_revision) !== epoch) {
        void this.loseLeadership(epoch, kv ? `the leader key was taken by epoch ${kv.create_revision}` : 'the leader key is gone');
        return false;
      }
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not confirm leadership with etcd');
    }
    return this.hasLeadership();
  }

  /**
   * A write guarded by `epoch` was refused: the leader key no longer has that create revision.
   * Leadership of that epoch ends at once.
   */
  onFenced(epoch: number, reason: string): void {
    if (this.epoch === epoch) void this.loseLeadership(epoch, reason);
  }

  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    clearTimeout(this.retryTimer);
    await this.campaigning?.catch(() => undefined);
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.cancel().catch(() => undefined);
    const epoch = this.epoch;
    // Revoking deletes the leader key with the lease: a standby's watch fires at once instead of
    // waiting out the TTL. Marked first, so that the standby does not report a lost leader.
    if (epoch !== undefined) await this.markSteppedDown(epoch);
    if (epoch !== undefined) await this.loseLeadership(epoch, 'leader election service stopped');
    else await this.revokeLease();
    await this.drainCallbacks();
  }

  // ---------------------------------------------------------------------------------------------

  private notify(call: (c: LeaderContender) => void | Promise<void>): void {
    const contender = this.contender;
    if (!contender) return;
    this.callbacks = this.callbacks.then(async () => {
      try {
        await call(contender);
      } catch (err) {
        this.logger.error({ err }, 'leader contender callback failed');
      }
    });
  }

  private async drainCallbacks(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.callbacks;
      await seen;
    } while (seen !== this.callbacks);
  }

  /** Runs one campaign at a time; a request during one runs another right after it. */
  private campaign(): Promise<void> {
    if (this.campaigning) {
      this.campaignAgain = true;
      return this.campaigning;
    }
    const run = (async () => {
      do {
        this.campaignAgain = false;
        try {
          await this.campaignOnce();
        } catch (err) {
          // Once per distinct problem: etcd being down for a while would otherwise flood the log.
          const message = errorMessage(err).split('\n')[0] ?? '';
          if (message !== this.lastError) this.logger.warn({ err: message }, 'leader election step failed; retrying');
          this.lastError = message;
          this.scheduleRetry();
        }
      } while (this.campaignAgain && this.state === 'running' && this.epoch === undefined);
    })();
    this.campaigning = run;
    void run.finally(() => {
      if (this.campaigning === run) this.campaigning = undefined;
    });
    return run;
  }

  private scheduleRetry(): void {
    clearTimeout(this.retryTimer);
    if (this.state !== 'running') return;
    this.retryTimer = setTimeout(() => void this.campaign(), this.retryIntervalMs);
  }

  private async ensureWatch(): Promise<void> {
    if (this.watcher) return;
    const key = this.conn.keys.leader;
    const watcher = await this.conn.call('watching', key, () => this.conn.client.watch().key(key).create());
    if (this.state !== 'running') {
      await watcher.cancel().catch(() => undefined);
      return;
    }
    this.watcher = watcher;
    watcher.on('delete', () => {
      const epoch = this.epoch;
      if (epoch !== undefined) {
        void this.loseLeadership(epoch, 'the leader key was deleted (lease expired or revoked)');
        return;
      }
      this.previousLeader.sawDeleted(this.clock.now());
      void this.campaign();
    });
    watcher.on('put', (kv) => {
      // Our own campaign's put may arrive before its transaction's answer: it is not a new leader.
      if (!this.isOwnRecord(kv)) this.previousLeader.sawLeader(kv);
      const epoch = this.epoch;
      if (epoch !== undefined && Number(kv.create_revision) !== epoch) {
        void this.loseLeadership(epoch, `the leader key was recreated by epoch ${kv.create_revision}`);
      }
    });
    // After a reconnect the watch resumes from its last revision; look once more anyway, in case
    // the history it resumes from was compacted.
    watcher.on('connected', () => {
      if (this.epoch === undefined) void this.campaign();
    });
    watcher.on('disconnected', (err) => this.logger.warn({ err: errorMessage(err) }, 'etcd watch of the leader key disconnected; reconnecting'));
    watcher.on('error', (err) => this.logger.warn({ err: errorMessage(err) }, 'etcd watch of the leader key failed'));
  }

  private async campaignOnce(): Promise<void> {
    if (this.state !== 'running' || this.epoch !== undefined) return;
    await this.ensureWatch();
    for (const old of [...this.unrevoked]) await this.revokeGiven(old);
    const key = this.conn.keys.leader;
    const lease = this.conn.lease(Math.max(1, Math.ceil(this.ttlMs / 1000)));
    lease.on('lost', () => undefined);
    const sentAt = performance.now();
    let leaseId: string;
    try {
      leaseId = await this.conn.call('granting a lease for', key, () => lease.grant());
    } catch (err) {
      lease.release();
      throw err;
    }
    const keyBuf = Buffer.from(key);
    const electedAtMs = this.clock.now();
    const res = await this.conn
      .call('campaigning for', key, () =>
        this.conn.client.kv.txn(
          {
            compare: [{ key: keyBuf, target: 'Create', result: 'Equal', create_revision: 0 }],
            success: [
              { request_put: { key: keyBuf, value: encodeLeaderValue(this.leaderValue(electedAtMs)), lease: leaseId } },
              { request_range: { key: keyBuf } },
            ],
            failure: [{ request_range: { key: keyBuf } }],
          },
          this.conn.callOptions(),
        ),
      )
      .catch(async (err: unknown) => {
        await this.revokeGiven(lease);
        throw err;
      });
    const kv = res.responses[res.succeeded ? 1 : 0]?.response_range.kvs[0];
    if (!res.succeeded || !kv) {
      await this.revokeGiven(lease);
      if (kv) this.previousLeader.sawLeader(kv);
      const holder = kv ? leaderFromKv(kv) : undefined;
      const desc = holder ? `${holder.jobmasterId} at ${holder.address} (epoch ${holder.epoch})` : 'another contender';
      if (desc !== this.lastHolder) {
        this.lastHolder = desc;
        this.logger.info({ holder }, `standing by: ${key} is held by ${desc}`);
      }
      // The key may have been deleted between the transaction and now, before the watch saw it
      // (the watch was created first, so it did see it): nothing to do but wait for the watch.
      return;
    }
    if (this.state !== 'running') {
      await this.revokeGiven(lease);
      return;
    }
    const epoch = Number(kv.create_revision);
    this.grantedAfterExpiryLastHeardMs = this.previousLeader.takeOver();
    this.electedAtMs = electedAtMs;
    this.lastError = undefined;
    this.lease = lease;
    this.epoch = epoch;
    this.lastHolder = undefined;
    this.extendValidity(sentAt, this.ttlMs);
    this.scheduleKeepalive();
    this.logger.info({ epoch, address: this.address, leaseId }, 'granted leadership');
    this.notify((c) => c.grantLeadership(epoch));
  }

  private extendValidity(sentAt: number, ttlMs: number): void {
    this.validUntil = Math.max(this.validUntil, sentAt + ttlMs - this.marginMs);
    clearTimeout(this.deadlineTimer);
    const epoch = this.epoch;
    if (epoch === undefined) return;
    this.deadlineTimer = setTimeout(() => {
      if (this.epoch === epoch && performance.now() >= this.validUntil) {
        void this.loseLeadership(epoch, `no etcd keep-alive succeeded for ${this.ttlMs - this.marginMs} ms; the lease may expire`);
      }
    }, Math.max(0, this.validUntil - performance.now()));
  }

  private scheduleKeepalive(): void {
    clearTimeout(this.keepaliveTimer);
    if (this.epoch === undefined || this.state !== 'running') return;
    this.keepaliveTimer = setTimeout(() => void this.keepalive(), this.renewIntervalMs);
  }

  private async keepalive(): Promise<void> {
    const epoch = this.epoch;
    const lease = this.lease;
    if (epoch === undefined || !lease) return;
    if (performance.now() >= this.validUntil) {
      // Paused past the deadline (SIGSTOP, a stalled event loop): the lease may be gone already.
      void this.loseLeadership(epoch, 'the lease deadline passed before the next keep-alive (process paused?)');
      return;
    }
    const sentAt = performance.now();
    try {
      const res = await this.conn.call('renewing the lease of', this.conn.keys.leader, () => lease.keepaliveOnce(this.conn.callOptions()));
      if (this.epoch !== epoch) return;
      const ttl = Number(res.TTL);
      if (!(ttl > 0)) {
        void this.loseLeadership(epoch, 'etcd says the lease expired');
        return;
      }
      this.extendValidity(sentAt, Math.min(ttl * 1000, this.ttlMs));
    } catch (err) {
      if (this.epoch !== epoch) return;
      if (lease.revoked()) {
        void this.loseLeadership(epoch, `the lease was lost: ${errorMessage(err)}`);
        return;
      }
      this.logger.warn({ err: errorMessage(err), epoch, msLeft: Math.round(this.validUntil - performance.now()) }, 'etcd keep-alive failed; retrying until the lease deadline');
    }
    this.scheduleKeepalive();
  }

  private electedAtMs = 0;

  private isOwnRecord(kv: IKeyValue): boolean {
    try {
      return leaderFromKv(kv).jobmasterId === this.contenderId;
    } catch {
      return false;
    }
  }

  private leaderValue(electedAtMs: number, steppedDown?: true): Parameters<typeof encodeLeaderValue>[0] {
    return { jobmasterId: this.contenderId, address: this.address, electedAtMs, leaseTtlMs: Math.max(1, Math.ceil(this.ttlMs / 1000)) * 1000, ...(steppedDown ? { steppedDown } : {}) };
  }

  /** Best effort: a standby that misses it only reports a lost leader that in fact stepped down. */
  private async markSteppedDown(epoch: number): Promise<void> {
    const keyBuf = Buffer.from(this.conn.keys.leader);
    await this.conn
      .call('stepping down from', this.conn.keys.leader, () =>
        this.conn.client.kv.txn(
          {
            compare: [{ key: keyBuf, target: 'Create', result: 'Equal', create_revision: epoch }],
            success: [{ request_put: { key: keyBuf, value: encodeLeaderValue(this.leaderValue(this.electedAtMs, true)), ignore_lease: true } }],
            failure: [],
          },
          this.conn.callOptions(),
        ),
      )
      .catch((err: unknown) => this.logger.debug({ err: errorMessage(err) }, 'could not mark the leader key as stepped down'));
  }

  /** Ends leadership of `epoch` now: the contender is told before the lease can expire in etcd. */
  private loseLeadership(epoch: number, reason: string): Promise<void> {
    if (this.epoch !== epoch) return Promise.resolve();
    this.epoch = undefined;
    this.validUntil = 0;
    clearTimeout(this.keepaliveTimer);
    clearTimeout(this.deadlineTimer);
    this.logger.warn({ epoch, reason }, 'leadership revoked');
    this.notify((c) => c.revokeLeadership(reason));
    // Our lease only carries our own key: revoking it can never delete a newer leader's key.
    return this.revokeLease().then(() => {
      if (this.state === 'running') void this.campaign();
    });
  }

  private async revokeLease(): Promise<void> {
    const lease = this.lease;
    this.lease = undefined;
    if (lease) await this.revokeGiven(lease);
  }

  private async revokeGiven(lease: Lease): Promise<void> {
    try {
      await this.conn.call('revoking the lease of', this.conn.keys.leader, () => lease.revoke(this.conn.callOptions()));
      this.unrevoked.delete(lease);
    } catch (err) {
      this.unrevoked.add(lease);
      lease.release();
      this.logger.debug({ err: errorMessage(err) }, 'could not revoke an etcd lease; it expires by itself');
    }
  }
}
