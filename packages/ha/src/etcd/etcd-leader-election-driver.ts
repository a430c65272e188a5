import { performance } from 'node:perf_hooks';
import type { IKeyValue, Lease, Watcher } from 'etcd3';
import { type Clock, errorMessage, type Logger, systemClock } from '@rebound/core';
import { DefaultLeaderElectionService } from '../default-leader-election-service.js';
import {
  type AcquiredLeadership,
  type LeaderElectionDriver,
  type LeaderElectionDriverEvents,
  type LeaderElectionDriverOptions,
  type LeaderElectionPolicy,
  leaseSettings,
  type RenewOutcome,
} from '../leader-election-driver.js';
import type { EtcdConnection } from './etcd-connection.js';
import { encodeLeaderValue, leaderFromKv } from './etcd-leader-record.js';
import { PreviousLeaderObserver } from './previous-leader-observer.js';

export interface EtcdLeaderElectionOptions extends LeaderElectionDriverOptions {
  readonly connection: EtcdConnection;
  readonly logger: Logger;
}

/** A DefaultLeaderElectionService over an EtcdLeaderElectionDriver. */
export function createEtcdLeaderElectionService(o: EtcdLeaderElectionOptions): DefaultLeaderElectionService {
  const logger = o.logger.child({ component: 'EtcdLeaderElectionService', contenderId: o.contenderId });
  return new DefaultLeaderElectionService(new EtcdLeaderElectionDriver(o, logger), logger);
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
export class EtcdLeaderElectionDriver implements LeaderElectionDriver {
  readonly policy: LeaderElectionPolicy;
  private readonly conn: EtcdConnection;
  private readonly clock: Clock;
  private readonly ttlMs: number;
  /** How long before the lease's earliest possible expiry in etcd leadership is given up. */
  private readonly marginMs: number;

  private events: LeaderElectionDriverEvents | undefined;
  private stopped = false;
  private watcher: Watcher | undefined;
  /** The leadership this driver holds: its epoch, lease and when it was elected. */
  private held: { readonly epoch: number; readonly lease: Lease; readonly electedAtMs: number } | undefined;
  private lastHolder: string | undefined;
  /**
   * Leases whose revocation failed (etcd unreachable). A restarted etcd extends every lease by its
   * TTL, so one of them may keep an old leader key alive: revoked at the next campaign.
   */
  private readonly unrevoked = new Set<Lease>();
  /** Revocations under way: the contender is told of a loss without waiting for etcd. */
  private readonly revoking = new Set<Promise<void>>();
  private readonly previousLeader = new PreviousLeaderObserver();

  constructor(
    private readonly o: EtcdLeaderElectionOptions,
    private readonly logger: Logger,
  ) {
    const lease = leaseSettings(o.config);
    this.conn = o.connection;
    this.clock = o.clock ?? systemClock;
    this.ttlMs = lease.timeoutMs;
    // etcd3 keeps its own leases alive every third of the TTL; the leader key's lease no slower.
    const renewIntervalMs = Math.min(lease.renewIntervalMs, Math.max(1, Math.floor(this.ttlMs / 3)));
    this.marginMs = Math.min(renewIntervalMs, Math.floor(this.ttlMs / 4));
    this.policy = {
      name: 'etcd',
      renewIntervalMs,
      retryIntervalMs: lease.pollIntervalMs,
      watchesLeader: true,
      endsAtDeadline: true,
    };
  }

  now(): number {
    return performance.now();
  }

  async start(events: LeaderElectionDriverEvents): Promise<void> {
    this.events = events;
  }

  async tryAcquire(): Promise<AcquiredLeadership | undefined> {
    await this.ensureWatch();
    await Promise.all(this.revoking);
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
      return undefined;
    }
    const epoch = Number(kv.create_revision);
    this.held = { epoch, lease, electedAtMs };
    this.lastHolder = undefined;
    this.logger.info({ epoch, address: this.o.address, leaseId }, 'won the leader key');
    return {
      epoch,
      validUntil: sentAt + this.ttlMs - this.marginMs,
      previousLeaderLastHeardMs: this.previousLeader.takeOver(),
    };
  }

  async renew(epoch: number, late: boolean): Promise<RenewOutcome> {
    const held = this.held;
    if (held?.epoch !== epoch) return { lost: 'the lease is no longer held', releaseLease: true };
    // Paused past the deadline (SIGSTOP, a stalled event loop): the lease may be gone already.
    if (late)
      return { lost: 'the lease deadline passed before the next keep-alive (process paused?)', releaseLease: true };
    const sentAt = performance.now();
    try {
      const res = await this.conn.call('renewing the lease of', this.conn.keys.leader, () =>
        held.lease.keepaliveOnce(this.conn.callOptions()),
      );
      const ttl = Number(res.TTL);
      if (!(ttl > 0)) return { lost: 'etcd says the lease expired', releaseLease: true };
      return { validUntil: sentAt + Math.min(ttl * 1000, this.ttlMs) - this.marginMs };
    } catch (err) {
      if (held.lease.revoked()) return { lost: `the lease was lost: ${errorMessage(err)}`, releaseLease: true };
      throw err;
    }
  }

  /** Reads the leader key: it must still have create revision `epoch`. Does not extend the lease. */
  async confirm(epoch: number): Promise<RenewOutcome> {
    try {
      const { kv } = await this.conn.get(this.conn.keys.leader);
      if (!kv || Number(kv.create_revision) !== epoch) {
        return {
          lost: kv ? `the leader key was taken by epoch ${kv.create_revision}` : 'the leader key is gone',
          releaseLease: true,
        };
      }
    } catch (err) {
      this.logger.warn({ err: errorMessage(err) }, 'could not confirm leadership with etcd');
    }
    return { validUntil: undefined };
  }

  /** Our lease only carries our own key: revoking it can never delete a newer leader's key. */
  async release(epoch: number): Promise<void> {
    const held = this.held;
    if (held?.epoch !== epoch) return;
    this.held = undefined;
    const revoking = this.revokeGiven(held.lease);
    this.revoking.add(revoking);
    void revoking.finally(() => this.revoking.delete(revoking));
  }

  /**
   * Revoking deletes the leader key with the lease: a standby's watch fires at once instead of
   * waiting out the TTL. Marked first, so that the standby does not report a lost leader.
   */
  async stop(epoch: number | undefined): Promise<void> {
    this.stopped = true;
    const watcher = this.watcher;
    this.watcher = undefined;
    await watcher?.cancel().catch(() => undefined);
    const held = this.held;
    this.held = undefined;
    if (held) {
      if (held.epoch === epoch) await this.markSteppedDown(held.epoch, held.electedAtMs);
      await this.revokeGiven(held.lease);
    }
    await Promise.all(this.revoking);
  }

  private async ensureWatch(): Promise<void> {
    if (this.watcher) return;
    const key = this.conn.keys.leader;
    const watcher = await this.conn.call('watching', key, () => this.conn.client.watch().key(key).create());
    if (this.stopped) {
      await watcher.cancel().catch(() => undefined);
      return;
    }
    this.watcher = watcher;
    watcher.on('delete', () => {
      const held = this.held;
      if (held) {
        this.events?.leadershipLost(held.epoch, 'the leader key was deleted (lease expired or revoked)');
        return;
      }
      this.previousLeader.sawDeleted(this.clock.now());
      this.events?.leaderMayBeFree();
    });
    watcher.on('put', (kv) => {
      // Our own campaign's put may arrive before its transaction's answer: it is not a new leader.
      if (!this.isOwnRecord(kv)) this.previousLeader.sawLeader(kv);
      const held = this.held;
      if (held && Number(kv.create_revision) !== held.epoch) {
        this.events?.leadershipLost(held.epoch, `the leader key was recreated by epoch ${kv.create_revision}`);
      }
    });
    // After a reconnect the watch resumes from its last revision; look once more anyway, in case
    // the history it resumes from was compacted.
    watcher.on('connected', () => this.events?.leaderMayBeFree());
    watcher.on('disconnected', (err) =>
      this.logger.warn({ err: errorMessage(err) }, 'etcd watch of the leader key disconnected; reconnecting'),
    );
    watcher.on('error', (err) => this.logger.warn({ err: errorMessage(err) }, 'etcd watch of the leader key failed'));
  }

  private isOwnRecord(kv: IKeyValue): boolean {
    try {
      return leaderFromKv(kv).jobmasterId === this.o.contenderId;
    } catch {
      return false;
    }
  }

  private leaderValue(electedAtMs: number, steppedDown?: true): Parameters<typeof encodeLeaderValue>[0] {
    return {
      jobmasterId: this.o.contenderId,
      address: this.o.address,
      electedAtMs,
      leaseTtlMs: Math.max(1, Math.ceil(this.ttlMs / 1000)) * 1000,
      ...(steppedDown ? { steppedDown } : {}),
    };
  }

  /** Best effort: a standby that misses it only reports a lost leader that in fact stepped down. */
  private async markSteppedDown(epoch: number, electedAtMs: number): Promise<void> {
    const keyBuf = Buffer.from(this.conn.keys.leader);
    await this.conn
      .call('stepping down from', this.conn.keys.leader, () =>
        this.conn.client.kv.txn(
          {
            compare: [{ key: keyBuf, target: 'Create', result: 'Equal', create_revision: epoch }],
            success: [
              {
                request_put: {
                  key: keyBuf,
                  value: encodeLeaderValue(this.leaderValue(electedAtMs, true)),
                  ignore_lease: true,
                },
              },
            ],
            failure: [],
          },
          this.conn.callOptions(),
        ),
      )
      .catch((err: unknown) =>
        this.logger.debug({ err: errorMessage(err) }, 'could not mark the leader key as stepped down'),
      );
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
