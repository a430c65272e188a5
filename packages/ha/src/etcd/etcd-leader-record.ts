import type { IKeyValue } from 'etcd3';
import { HaDirInvalidError } from '@rebound/core';
import type { LeaderInfo } from '../leader-info.js';

/** The value of `/<cluster-id>/leader`: who leads and where. The epoch is the key's create revision. */
interface LeaderValue {
  readonly jobmasterId: string;
  readonly address: string;
  /** The leader's own clock when it was elected: shown to people, never compared across hosts. */
  readonly electedAtMs: number;
  /** The TTL of the lease the key is bound to: a standby that sees the key expire knows when it was last renewed. */
  readonly leaseTtlMs?: number;
  /** Set by a leader that steps down cleanly, just before it revokes its lease. */
  readonly steppedDown?: boolean;
}

/** What a standby learns from the leader key's value, beyond LeaderInfo. */
export function leaseFacts(kv: IKeyValue): { leaseTtlMs: number | undefined; steppedDown: boolean } {
  try {
    const o = JSON.parse(kv.value.toString('utf8')) as Partial<LeaderValue>;
    return {
      leaseTtlMs: typeof o.leaseTtlMs === 'number' ? o.leaseTtlMs : undefined,
      steppedDown: o.steppedDown === true,
    };
  } catch {
    return { leaseTtlMs: undefined, steppedDown: false };
  }
}

export function encodeLeaderValue(v: LeaderValue): Buffer {
  return Buffer.from(JSON.stringify(v));
}

export function leaderFromKv(kv: IKeyValue): LeaderInfo {
  let o: Partial<LeaderValue>;
  try {
    o = JSON.parse(kv.value.toString('utf8')) as Partial<LeaderValue>;
  } catch (err) {
    throw new HaDirInvalidError(
      `etcd key ${kv.key.toString()} is not a leader record (not JSON); only Rebound JobMasters may write it`,
      { cause: err },
    );
  }
  if (typeof o.jobmasterId !== 'string' || typeof o.address !== 'string') {
    throw new HaDirInvalidError(
      `etcd key ${kv.key.toString()} lacks jobmasterId or address; only Rebound JobMasters may write it`,
    );
  }
  return {
    epoch: Number(kv.create_revision),
    jobmasterId: o.jobmasterId,
    address: o.address,
    electedAtMs: typeof o.electedAtMs === 'number' ? o.electedAtMs : 0,
  };
}
