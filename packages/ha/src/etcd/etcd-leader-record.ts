import type { IKeyValue } from 'etcd3';
import { ErrorCode, ReboundError } from '@rebound/core';
import type { LeaderInfo } from '../leader-info.js';

/** The value of `/<cluster-id>/leader`: who leads and where. The epoch is the key's create revision. */
interface LeaderValue {
  readonly jobmasterId: string;
  readonly address: string;
  /** The leader's own clock when it was elected: shown to people, never compared across hosts. */
  readonly electedAtMs: number;
}

export function encodeLeaderValue(v: LeaderValue): Buffer {
  return Buffer.from(JSON.stringify(v));
}

export function leaderFromKv(kv: IKeyValue): LeaderInfo {
  let o: Partial<LeaderValue>;
  try {
    o = JSON.parse(kv.value.toString('utf8')) as Partial<LeaderValue>;
  } catch (err) {
    throw new ReboundError(ErrorCode.HA_DIR_INVALID, `etcd key ${kv.key.toString()} is not a leader record (not JSON); only Rebound JobMasters may write it`, { cause: err });
  }
  if (typeof o.jobmasterId !== 'string' || typeof o.address !== 'string') {
    throw new ReboundError(ErrorCode.HA_DIR_INVALID, `etcd key ${kv.key.toString()} lacks jobmasterId or address; only Rebound JobMasters may write it`);
  }
  return { epoch: Number(kv.create_revision), jobmasterId: o.jobmasterId, address: o.address, electedAtMs: typeof o.electedAtMs === 'number' ? o.electedAtMs : 0 };
}
