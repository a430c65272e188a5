import type { IKeyValue } from 'etcd3';
import { leaseFacts } from './etcd-leader-record.js';

/**
 * What a standby saw of the leader before it: the last leader record it read, and whether that
 * key went away by expiring (its leader died or was cut off) or by a clean step-down. From an
 * expiry it dates the old leader's last keep-alive on this process's own clock: when the delete
 * was seen, minus the lease TTL the record names.
 */
export class PreviousLeaderObserver {
  private lastSeen: IKeyValue | undefined;
  private expiredLastHeardMs: number | undefined;

  /** A leader record of another contender (watch put, lost campaign). */
  sawLeader(kv: IKeyValue): void {
    this.lastSeen = kv;
    this.expiredLastHeardMs = undefined;
  }

  /** The leader key was deleted while this process did not lead. */
  sawDeleted(nowMs: number): void {
    const facts = this.lastSeen ? leaseFacts(this.lastSeen) : undefined;
    this.lastSeen = undefined;
    this.expiredLastHeardMs =
      facts && !facts.steppedDown && facts.leaseTtlMs !== undefined ? nowMs - facts.leaseTtlMs : undefined;
  }

  /** On winning an election: when the leader before was last heard of, if its key expired. */
  takeOver(): number | undefined {
    const heard = this.expiredLastHeardMs;
    this.expiredLastHeardMs = undefined;
    return heard;
  }
}
