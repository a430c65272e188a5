import type { Clock, Configuration } from '@rebound/core';

/**
 * The backend half of leader election (Flink's LeaderElectionDriver): the atomic operations on
 * the lease and the leader record. Epochs and fencing live here, in the backend's own atomic
 * operations (a lock directory and an epoch file; an etcd transaction and the key's create
 * revision). DefaultLeaderElectionService holds the state machine on top: when to try, renew or
 * give up, what the contender is told, and for how long a lease is trusted.
 */
export interface LeaderElectionDriver {
  readonly policy: LeaderElectionPolicy;
  /** The clock lease deadlines are measured on (validUntil below). */
  now(): number;
  /** Called once, before the first attempt; `events` receives what the backend reports. */
  start(events: LeaderElectionDriverEvents): Promise<void>;
  /** One attempt at leadership; undefined while another contender holds it. */
  tryAcquire(): Promise<AcquiredLeadership | undefined>;
  /**
   * Renews the lease of `epoch`, verifying that it still leads. `late`: the previous deadline
   * passed before this renewal (the process was paused or its event loop stalled). Throws on a
   * transient failure, which the service retries until the deadline.
   */
  renew(epoch: number, late: boolean): Promise<RenewOutcome>;
  /** Checks leadership of `epoch` with the backend now (e.g. before a leader commits a decision). */
  confirm(epoch: number, late: boolean): Promise<RenewOutcome>;
  /**
   * Forgets leadership of `epoch` after it was lost or given up; `releaseLease`: also give the
   * lease up so that a standby need not wait for it to expire (where the backend can do so safely).
   */
  release(epoch: number, releaseLease: boolean): Promise<void>;
  /** Stops: gives leadership of `epoch` (if any) up cleanly, and reports no events from then on. */
  stop(epoch: number | undefined): Promise<void>;
}

/** What the backend reports between steps. */
export interface LeaderElectionDriverEvents {
  /** The leader record went away, or may have (a watch reconnected): a standby tries at once. */
  leaderMayBeFree(): void;
  /** The backend shows that leadership of `epoch` ended. */
  leadershipLost(epoch: number, reason: string): void;
}

export interface AcquiredLeadership {
  readonly epoch: number;
  /** Until when (on the driver's clock) the lease cannot have expired. */
  readonly validUntil: number;
  /** When the previous leader was last heard of, if its lease expired rather than being given up. */
  readonly previousLeaderLastHeardMs?: number;
}

export type RenewOutcome =
  /** Still leads; the lease is good until `validUntil` (undefined: unchanged). */
  | { readonly validUntil: number | undefined }
  /** Leadership is gone; `releaseLease` as in release(). */
  | { readonly lost: string; readonly releaseLease: boolean };

/** What every driver is given: who contends, where it is reached, and the lease settings. */
export interface LeaderElectionDriverOptions {
  /** Identity of this contender (the JobMaster id), recorded with the lease and the leader record. */
  readonly contenderId: string;
  /** Address TaskManagers and clients reach this JobMaster at (host:port). */
  readonly address: string;
  readonly config: Configuration;
  readonly clock?: Clock;
}

/** How DefaultLeaderElectionService drives a backend. */
export interface LeaderElectionPolicy {
  /** For log lines and messages. */
  readonly name: string;
  /** How often a leader renews its lease. */
  readonly renewIntervalMs: number;
  /** How long after a failed step the next one runs, and how often a standby polls. */
  readonly retryIntervalMs: number;
  /**
   * True when the driver reports a leader record going away (events.leaderMayBeFree): a standby
   * then waits for that instead of polling, and campaigns again at once after losing leadership.
   */
  readonly watchesLeader: boolean;
  /**
   * True when leadership must end by itself at the lease's deadline (etcd: the lease expires in
   * etcd whether or not this process looks). False when a late renewal is verified first (the
   * file lease is only taken over by a contender that sees it expired).
   */
  readonly endsAtDeadline: boolean;
}

/** The `high-availability.lease.*` settings, read once. */
export function leaseSettings(config: Configuration): {
  readonly timeoutMs: number;
  readonly renewIntervalMs: number;
  readonly pollIntervalMs: number;
} {
  return {
    timeoutMs: config.getDurationMs('high-availability.lease.timeout'),
    renewIntervalMs: config.getDurationMs('high-availability.lease.renew-interval'),
    pollIntervalMs: config.getDurationMs('high-availability.lease.poll-interval'),
  };
}
