import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Clock,
  type Configuration,
  errorMessage,
  IllegalStateError,
  type Logger,
  systemClock,
  writeFileAtomic,
} from '@rebound/core';
import { HaPaths, isErrno } from './ha-dir.js';
import type { LeaderContender, LeaderElection } from './ha-services.js';
import { allocateEpoch, type LeaderInfo, readLeader } from './leader-info.js';

export type { LeaderContender } from './ha-services.js';

export interface LeaderElectionServiceOptions {
  readonly haDir: string;
  /** Identity of this contender (the JobMaster id), recorded in owner.json and leader.json. */
  readonly contenderId: string;
  /** Address TaskManagers and clients reach this JobMaster at (host:port). */
  readonly address: string;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/** Contents of `<ha>/leader.lock/owner.json`. */
export interface LeaseOwner {
  readonly contenderId: string;
  readonly pid: number;
  readonly acquiredAtMs: number;
  /** Random per acquisition, so a contender never mistakes an older lease of its own for the current one. */
  readonly leaseId: string;
}

type State = 'idle' | 'running' | 'stopped';

async function readOwnerAt(lockDir: string): Promise<LeaseOwner | undefined> {
  let text: string;
  try {
    text = await readFile(join(lockDir, 'owner.json'), 'utf8');
  } catch (err) {
    if (isErrno(err, 'ENOENT', 'ENOTDIR')) return undefined;
    throw err;
  }
  try {
    const o = JSON.parse(text) as Partial<LeaseOwner>;
    if (typeof o.contenderId !== 'string' || typeof o.leaseId !== 'string') return undefined;
    return { contenderId: o.contenderId, pid: Number(o.pid), acquiredAtMs: Number(o.acquiredAtMs), leaseId: o.leaseId };
  } catch {
    // A holder that died while writing its owner file: the lease mtime decides what happens.
    return undefined;
  }
}

function describeOwner(owner: LeaseOwner | undefined): string {
  return owner ? `${owner.contenderId} (pid ${owner.pid})` : 'an unknown contender';
}

/**
 * Leader election among the JobMasters sharing one HA directory.
 *
 * The lock is a lease: the directory `<ha>/leader.lock/` (mkdir is atomic), whose mtime the holder
 * renews. A lease rather than flock because a paused (SIGSTOPped) leader must lose leadership,
 * while a flock stays held by a stopped process. Safety does not rest on the lock but on the epoch
 * allocated after winning it: TaskManagers reject calls from epochs older than the newest they saw.
 */
export class LeaderElectionService implements LeaderElection {
  private readonly haDir: string;
  private readonly contenderId: string;
  private readonly address: string;
  private readonly logger: Logger;
  private readonly clock: Clock;
  private readonly leaseTimeoutMs: number;
  private readonly renewIntervalMs: number;
  private readonly pollIntervalMs: number;
  private readonly lockDir: string;

  private state: State = 'idle';
  private listener: LeaderContender | undefined;
  private timer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private callbacks: Promise<void> = Promise.resolve();

  /** Set while this service holds the lease directory it created. */
  private leaseId: string | undefined;
  /** Set while this service is leader. */
  private epoch: number | undefined;
  /** Clock time of the last lease write this service verified. */
  private lastRenewedAtMs = 0;
  private relinquishReason: string | undefined;
  private lastSeenHolder: string | undefined;

  constructor(options: LeaderElectionServiceOptions) {
    this.haDir = options.haDir;
    this.contenderId = options.contenderId;
    this.address = options.address;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger.child({ component: 'LeaderElectionService', contenderId: options.contenderId });
    this.leaseTimeoutMs = options.config.getDurationMs('high-availability.lease.timeout');
    this.renewIntervalMs = options.config.getDurationMs('high-availability.lease.renew-interval');
    this.pollIntervalMs = options.config.getDurationMs('high-availability.lease.poll-interval');
    this.lockDir = HaPaths.lockDir(this.haDir);
    if (this.renewIntervalMs >= this.leaseTimeoutMs) {
      this.logger.warn(
        { renewIntervalMs: this.renewIntervalMs, leaseTimeoutMs: this.leaseTimeoutMs },
        'high-availability.lease.renew-interval is not below high-availability.lease.timeout; the leader will keep losing its lease',
      );
    }
  }

  /**
   * Starts contending. Resolves after the first attempt at the lock: by then this service either
   * leads (grantLeadership has been dispatched) or stands by and polls.
   */
  async start(listener: LeaderContender): Promise<void> {
    if (this.state !== 'idle') throw new IllegalStateError('LeaderElectionService can be started only once');
    this.listener = listener;
    this.state = 'running';
    await mkdir(this.haDir, { recursive: true });
    await this.runTick();
  }

  /**
   * True while this service holds a lease it has verified within the lease timeout. Turns false as
   * soon as the lease may have expired (e.g. after the process was paused), before any check runs.
   */
  hasLeadership(): boolean {
    return this.epoch !== undefined && this.clock.now() - this.lastRenewedAtMs <= this.leaseTimeoutMs;
  }

  /** The epoch of the current leadership, undefined when not leading. */
  currentEpoch(): number | undefined {
    return this.hasLeadership() ? this.epoch : undefined;
  }

  /**
   * Verifies and renews the lease now rather than at the next renew tick (e.g. before a leader
   * commits a decision). Revokes leadership if it was lost.
   */
  async confirmLeadership(): Promise<boolean> {
    if (this.state !== 'running') return false;
    await this.inflight?.catch(() => {});
    if (this.epoch === undefined || this.state !== 'running') return false;
    await this.runTick();
    return this.hasLeadership();
  }

  /**
   * Stops contending. A leader gives its lease up (removes the lock directory if still its own)
   * so that a standby takes over at its next poll rather than after the lease timeout; the
   * contender gets revokeLeadership. Resolves when all callbacks have returned.
   */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.inflight?.catch(() => {});
    if (this.epoch !== undefined) {
      const epoch = this.epoch;
      this.epoch = undefined;
      try {
        await this.releaseLockIfOurs();
      } catch (err) {
        this.logger.warn({ err }, 'could not remove the leader lease; a standby takes over after the lease timeout');
      }
      this.logger.info({ epoch }, 'gave up leadership: leader election service stopped');
      this.notify((l) => l.revokeLeadership('leader election service stopped'));
    } else if (this.leaseId !== undefined) {
      await this.releaseLockIfOurs().catch(() => {});
    }
    this.leaseId = undefined;
    await this.drainCallbacks();
  }

  // ---------------------------------------------------------------------------------------------
  // Loop

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.state !== 'running') return;
    const delay = this.epoch !== undefined ? this.renewIntervalMs : this.pollIntervalMs;
    this.timer = setTimeout(() => void this.runTick(), delay);
  }

  /** One step of the loop: renew while leading, try to acquire otherwise. Never overlaps itself. */
  private runTick(): Promise<void> {
    if (this.inflight) return this.inflight;
    if (this.state !== 'running') return Promise.resolve();
    const tick = this.tick();
    this.inflight = tick;
    return tick;
  }

  private async tick(): Promise<void> {
    try {
      if (this.epoch !== undefined) await this.renew();
      else await this.tryAcquire();
    } catch (err) {
      this.logger.warn({ err }, 'leader election step failed; retrying');
    } finally {
      this.inflight = undefined;
      this.schedule();
    }
  }

  private notify(call: (listener: LeaderContender) => void | Promise<void>, onError?: (err: unknown) => void): void {
    const listener = this.listener;
    if (!listener) return;
    // Callbacks run one after another, never concurrently with each other, and never block the
    // renew loop: a slow grantLeadership must not let the lease expire.
    this.callbacks = this.callbacks.then(async () => {
      try {
        await call(listener);
      } catch (err) {
        if (onError) onError(err);
        else this.logger.error({ err }, 'leader contender callback failed');
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

  // ---------------------------------------------------------------------------------------------
  // Standby: acquire

  private async tryAcquire(): Promise<void> {
    const lockedAtMs = await this.tryLock();
    if (lockedAtMs === undefined) return;
    let epoch: number;
    try {
      epoch = await allocateEpoch(this.haDir);
      const current = await readLeader(this.haDir).catch(() => undefined);
      if (current && current.epoch > epoch) {
        this.logger.warn({ epoch, leaderEpoch: current.epoch }, 'leader.json already names a newer epoch; giving the lease up');
        await this.releaseLockIfOurs();
        this.leaseId = undefined;
        return;
      }
      if (!(await this.ownsLock())) {
        this.logger.warn({ epoch }, 'lost the leader lease while allocating an epoch');
        this.leaseId = undefined;
        return;
      }
      await this.writeLeaderInfo(epoch);
    } catch (err) {
      await this.releaseLockIfOurs().catch(() => {});
      this.leaseId = undefined;
      throw err;
    }
    this.epoch = epoch;
    this.lastRenewedAtMs = lockedAtMs;
    this.lastSeenHolder = undefined;
    this.logger.info({ epoch, address: this.address }, 'granted leadership');
    this.notify(
      (l) => l.grantLeadership(epoch),
      (err) => {
        this.logger.error({ err, epoch }, 'grantLeadership failed; giving leadership up');
        if (this.epoch === epoch) {
          this.relinquishReason = `grantLeadership failed: ${errorMessage(err)}`;
          void this.runTick();
        }
      },
    );
  }

  /**
   * When this contender's leadership began by taking over an expired lease: the last time the
   * previous leader renewed it, i.e. when it was last heard of. Undefined when the lock was free
   * (first leader, or the previous one stepped down cleanly).
   */
  previousLeaderLastHeardMs(): number | undefined {
    return this.expiredLeaseRenewedAtMs;
  }

  private expiredLeaseRenewedAtMs: number | undefined;

  /** Takes the lease directory; returns the clock time its lease starts at, undefined if held by another. */
  private async tryLock(): Promise<number | undefined> {
    this.expiredLeaseRenewedAtMs = undefined;
    try {
      await mkdir(this.lockDir);
    } catch (err) {
      if (!isErrno(err, 'EEXIST')) throw err;
      const seen = await stat(this.lockDir).catch((e: unknown) => {
        if (isErrno(e, 'ENOENT')) return undefined;
        throw e;
      });
      if (!seen) return undefined;
      const ageMs = this.clock.now() - seen.mtimeMs;
      const owner = await readOwnerAt(this.lockDir).catch(() => undefined);
      if (ageMs <= this.leaseTimeoutMs) {
        const holder = describeOwner(owner);
        if (holder !== this.lastSeenHolder) {
          this.lastSeenHolder = holder;
          this.logger.info({ holder: owner }, `standing by: the leader lease is held by ${holder}`);
        }
        return undefined;
      }
      this.logger.info({ holder: owner, ageMs: Math.round(ageMs) }, `the leader lease of ${describeOwner(owner)} expired; taking it over`);
      await this.moveAsideStaleLock(seen.ino, seen.mtimeMs);
      this.expiredLeaseRenewedAtMs = seen.mtimeMs;
      try {
        await mkdir(this.lockDir);
      } catch (err2) {
        if (isErrno(err2, 'EEXIST')) return undefined;
        throw err2;
      }
    }
    const leaseId = randomBytes(8).toString('hex');
    const owner: LeaseOwner = { contenderId: this.contenderId, pid: process.pid, acquiredAtMs: this.clock.now(), leaseId };
    try {
      // 'wx' rather than writeFileAtomic: if a concurrent takeover moved our fresh directory away,
      // this must fail instead of recreating a lock directory nobody won.
      const fh = await open(HaPaths.lockOwner(this.haDir), 'wx');
      try {
        await fh.writeFile(JSON.stringify(owner));
        await fh.sync();
      } finally {
        await fh.close();
      }
      const at = this.clock.now();
      await utimes(this.lockDir, new Date(at), new Date(at));
      this.leaseId = leaseId;
      return at;
    } catch (err) {
      if (isErrno(err, 'ENOENT', 'EEXIST', 'ENOTDIR')) return undefined;
      throw err;
    }
  }

  /**
   * Renames an expired lease directory out of the way. Another contender may have replaced it
   * between our look and the rename (the race of proper-lockfile#121), so the moved directory is
   * checked and put back if it is not the one seen expired.
   */
  private async moveAsideStaleLock(ino: number, mtimeMs: number): Promise<void> {
    const aside = `${this.lockDir}.stale-${randomBytes(6).toString('hex')}`;
    try {
      await rename(this.lockDir, aside);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return;
      throw err;
    }
    const moved = await stat(aside);
    if (moved.ino !== ino || moved.mtimeMs !== mtimeMs) {
      try {
        await rename(aside, this.lockDir);
        this.logger.info('the leader lease was renewed or replaced while being taken over; left it in place');
        return;
      } catch {
        // A third contender already made a new lock; the one we moved will notice its loss.
      }
    }
    await rm(aside, { recursive: true, force: true });
  }

  // ---------------------------------------------------------------------------------------------
  // Leader: renew

  private async ownsLock(): Promise<boolean> {
    const owner = await readOwnerAt(this.lockDir);
    return owner !== undefined && owner.leaseId === this.leaseId;
  }

  private async renew(): Promise<void> {
    const epoch = this.epoch;
    if (epoch === undefined) return;
    if (this.relinquishReason !== undefined) {
      const reason = this.relinquishReason;
      this.relinquishReason = undefined;
      await this.loseLeadership(reason, true);
      return;
    }
    const now = this.clock.now();
    const sinceRenewMs = now - this.lastRenewedAtMs;
    const late = sinceRenewMs > this.leaseTimeoutMs;
    if (late) {
      // The process was paused or the event loop stalled: another contender may have taken the
      // lease and a newer epoch. Nothing is acted upon until the checks below pass.
      this.logger.warn({ epoch, sinceRenewMs }, 'lease renewal is late; the lease may have expired, verifying leadership');
    }
    let owner: LeaseOwner | undefined;
    let leader: LeaderInfo | undefined;
    try {
      owner = await readOwnerAt(this.lockDir);
      if (!owner || owner.leaseId !== this.leaseId) {
        await this.loseLeadership(`lease lost: the lock is ${owner ? `now held by ${describeOwner(owner)}` : 'gone'}`, false);
        return;
      }
      leader = await readLeader(this.haDir).catch(() => undefined);
      if (leader && leader.epoch > epoch) {
        await this.loseLeadership(`a newer leader ${leader.jobmasterId} at ${leader.address} holds epoch ${leader.epoch}`, true);
        return;
      }
      await utimes(this.lockDir, new Date(now), new Date(now));
      if (!leader || leader.epoch < epoch || leader.address !== this.address || leader.jobmasterId !== this.contenderId) {
        // Only the lease holder writes leader.json; an older leader that woke up mid-write may
        // have put its own record back, so the holder restores the truth.
        this.logger.warn({ epoch, found: leader }, 'leader.json does not name this leader; rewriting it');
        await this.writeLeaderInfo(epoch);
      }
    } catch (err) {
      if (this.clock.now() - this.lastRenewedAtMs > this.leaseTimeoutMs) {
        await this.loseLeadership(`cannot renew the lease (${errorMessage(err)}) and it has expired`, false);
        return;
      }
      this.logger.warn({ err, epoch }, 'could not renew the leader lease; retrying');
      return;
    }
    if (late) this.logger.info({ epoch }, 'leadership verified after a late renewal');
    this.lastRenewedAtMs = now;
  }

  private async loseLeadership(reason: string, releaseLock: boolean): Promise<void> {
    const epoch = this.epoch;
    this.epoch = undefined;
    if (releaseLock) {
      try {
        await this.releaseLockIfOurs();
      } catch (err) {
        this.logger.warn({ err }, 'could not remove the leader lease');
      }
    }
    this.leaseId = undefined;
    this.logger.warn({ epoch, reason }, 'leadership revoked; contending again');
    this.notify((l) => l.revokeLeadership(reason));
  }

  private async releaseLockIfOurs(): Promise<void> {
    const leaseId = this.leaseId;
    if (leaseId === undefined) return;
    const owner = await readOwnerAt(this.lockDir);
    if (owner?.leaseId !== leaseId) return;
    // Rename first so no contender ever sees a half-deleted lease directory.
    const aside = `${this.lockDir}.released-${randomBytes(6).toString('hex')}`;
    try {
      await rename(this.lockDir, aside);
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return;
      throw err;
    }
    const moved = await readOwnerAt(aside).catch(() => undefined);
    if (moved?.leaseId !== leaseId) {
      await rename(aside, this.lockDir).catch(() => {});
      return;
    }
    await rm(aside, { recursive: true, force: true });
  }

  private async writeLeaderInfo(epoch: number): Promise<void> {
    const info: LeaderInfo = { epoch, jobmasterId: this.contenderId, address: this.address, electedAtMs: this.clock.now() };
    await writeFileAtomic(HaPaths.leader(this.haDir), `${JSON.stringify(info)}\n`);
  }
}
