import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { type Clock, type Logger, systemClock, writeFileAtomic } from '@rebound/core';
import { DefaultLeaderElectionService } from '../default-leader-election-service.js';
import { HaPaths, isErrno } from './ha-dir.js';
import {
  type AcquiredLeadership,
  type LeaderElectionDriver,
  type LeaderElectionDriverOptions,
  type LeaderElectionPolicy,
  leaseSettings,
  type RenewOutcome,
} from '../leader-election-driver.js';
import { allocateEpoch, type LeaderInfo, readLeader } from '../leader-info.js';

export type { LeaderContender } from '../ha-services.js';

export interface LeaderElectionServiceOptions extends LeaderElectionDriverOptions {
  readonly haDir: string;
  readonly logger: Logger;
}

/** Contents of `<ha>/leader.lock/owner.json`. */
export interface LeaseOwner {
  readonly contenderId: string;
  readonly pid: number;
  readonly acquiredAtMs: number;
  /** Random per acquisition, so a contender never mistakes an older lease of its own for the current one. */
  readonly leaseId: string;
}

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
 * Leader election among the JobMasters sharing one HA directory (the file backend's name for a
 * DefaultLeaderElectionService over a FileLeaderElectionDriver).
 */
export class LeaderElectionService extends DefaultLeaderElectionService {
  constructor(options: LeaderElectionServiceOptions) {
    const logger = options.logger.child({ component: 'LeaderElectionService', contenderId: options.contenderId });
    super(new FileLeaderElectionDriver(options, logger), logger);
  }
}

/**
 * The file lease. The lock is the directory `<ha>/leader.lock/` (mkdir is atomic), whose mtime the
 * holder renews. A lease rather than flock because a paused (SIGSTOPped) leader must lose
 * leadership, while a flock stays held by a stopped process. Safety does not rest on the lock but
 * on the epoch allocated after winning it (an `epochs/` file created with 'wx'): TaskManagers
 * reject calls from epochs older than the newest they saw. Nothing watches: standbys poll.
 */
export class FileLeaderElectionDriver implements LeaderElectionDriver {
  readonly policy: LeaderElectionPolicy;
  private readonly haDir: string;
  private readonly clock: Clock;
  private readonly leaseTimeoutMs: number;
  private readonly lockDir: string;
  /** Set while this driver holds the lease directory it created. */
  private leaseId: string | undefined;
  private lastSeenHolder: string | undefined;

  constructor(
    private readonly o: LeaderElectionServiceOptions,
    private readonly logger: Logger,
  ) {
    const { timeoutMs, renewIntervalMs, pollIntervalMs } = leaseSettings(o.config);
    this.haDir = o.haDir;
    this.leaseTimeoutMs = timeoutMs;
    this.clock = o.clock ?? systemClock;
    this.policy = {
      name: 'file',
      renewIntervalMs,
      retryIntervalMs: pollIntervalMs,
      watchesLeader: false,
      // A late renewal is verified instead: nobody takes the lease over without seeing it expired.
      endsAtDeadline: false,
    };
    this.lockDir = HaPaths.lockDir(this.haDir);
    if (renewIntervalMs >= this.leaseTimeoutMs) {
      this.logger.warn(
        { renewIntervalMs: renewIntervalMs, leaseTimeoutMs: this.leaseTimeoutMs },
        'high-availability.lease.renew-interval is not below high-availability.lease.timeout; the leader will keep losing its lease',
      );
    }
  }

  now(): number {
    return this.clock.now();
  }

  async start(): Promise<void> {
    await mkdir(this.haDir, { recursive: true });
  }

  async tryAcquire(): Promise<AcquiredLeadership | undefined> {
    const lock = await this.tryLock();
    if (lock === undefined) return undefined;
    let epoch: number;
    try {
      epoch = await allocateEpoch(this.haDir);
      const current = await readLeader(this.haDir).catch(() => undefined);
      if (current && current.epoch > epoch) {
        this.logger.warn(
          { epoch, leaderEpoch: current.epoch },
          'leader.json already names a newer epoch; giving the lease up',
        );
        await this.releaseLockIfOurs();
        this.leaseId = undefined;
        return undefined;
      }
      if (!(await this.ownsLock())) {
        this.logger.warn({ epoch }, 'lost the leader lease while allocating an epoch');
        this.leaseId = undefined;
        return undefined;
      }
      await this.writeLeaderInfo(epoch);
    } catch (err) {
      await this.releaseLockIfOurs().catch(() => {});
      this.leaseId = undefined;
      throw err;
    }
    this.lastSeenHolder = undefined;
    this.logger.info({ epoch, address: this.o.address }, 'won the leader lease');
    return {
      epoch,
      validUntil: lock.at + this.leaseTimeoutMs,
      // Taking over an expired lease: its mtime is when its holder last renewed it.
      previousLeaderLastHeardMs: lock.expiredLeaseRenewedAtMs,
    };
  }

  /** Takes the lease directory; undefined if held by another. */
  private async tryLock(): Promise<{ at: number; expiredLeaseRenewedAtMs: number | undefined } | undefined> {
    let expiredLeaseRenewedAtMs: number | undefined;
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
      this.logger.info(
        { holder: owner, ageMs: Math.round(ageMs) },
        `the leader lease of ${describeOwner(owner)} expired; taking it over`,
      );
      await this.moveAsideStaleLock(seen.ino, seen.mtimeMs);
      expiredLeaseRenewedAtMs = seen.mtimeMs;
      try {
        await mkdir(this.lockDir);
      } catch (err2) {
        if (isErrno(err2, 'EEXIST')) return undefined;
        throw err2;
      }
    }
    const leaseId = randomBytes(8).toString('hex');
    const owner: LeaseOwner = {
      contenderId: this.o.contenderId,
      pid: process.pid,
      acquiredAtMs: this.clock.now(),
      leaseId,
    };
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
      return { at, expiredLeaseRenewedAtMs };
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
    const aside = await this.renameLockAside('stale');
    if (aside === undefined) return;
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

  /** Renames the lock directory to `leader.lock.<why>-<hex>`; undefined when it was gone. */
  private async renameLockAside(why: 'stale' | 'released'): Promise<string | undefined> {
    const aside = `${this.lockDir}.${why}-${randomBytes(6).toString('hex')}`;
    try {
      await rename(this.lockDir, aside);
      return aside;
    } catch (err) {
      if (isErrno(err, 'ENOENT')) return undefined;
      throw err;
    }
  }

  private async ownsLock(): Promise<boolean> {
    const owner = await readOwnerAt(this.lockDir);
    return owner !== undefined && owner.leaseId === this.leaseId;
  }

  async renew(epoch: number, late: boolean): Promise<RenewOutcome> {
    const now = this.clock.now();
    if (late) {
      // The process was paused or the event loop stalled: another contender may have taken the
      // lease and a newer epoch. Nothing is acted upon until the checks below pass.
      this.logger.warn({ epoch }, 'lease renewal is late; the lease may have expired, verifying leadership');
    }
    const owner = await readOwnerAt(this.lockDir);
    if (!owner || owner.leaseId !== this.leaseId) {
      return {
        lost: `lease lost: the lock is ${owner ? `now held by ${describeOwner(owner)}` : 'gone'}`,
        releaseLease: false,
      };
    }
    const leader = await readLeader(this.haDir).catch(() => undefined);
    if (leader && leader.epoch > epoch) {
      return {
        lost: `a newer leader ${leader.jobmasterId} at ${leader.address} holds epoch ${leader.epoch}`,
        releaseLease: true,
      };
    }
    await utimes(this.lockDir, new Date(now), new Date(now));
    if (
      !leader ||
      leader.epoch < epoch ||
      leader.address !== this.o.address ||
      leader.jobmasterId !== this.o.contenderId
    ) {
      // Only the lease holder writes leader.json; an older leader that woke up mid-write may
      // have put its own record back, so the holder restores the truth.
      this.logger.warn({ epoch, found: leader }, 'leader.json does not name this leader; rewriting it');
      await this.writeLeaderInfo(epoch);
    }
    return { validUntil: now + this.leaseTimeoutMs };
  }

  /** The same as a renewal: there is nothing cheaper to look at than the lease itself. */
  confirm(epoch: number, late: boolean): Promise<RenewOutcome> {
    return this.renew(epoch, late);
  }

  async release(_epoch: number, releaseLease: boolean): Promise<void> {
    try {
      if (releaseLease) await this.releaseLockIfOurs();
    } finally {
      this.leaseId = undefined;
    }
  }

  /** Removes the lock directory if still this driver's, so that a standby takes over at its next poll. */
  async stop(): Promise<void> {
    try {
      await this.releaseLockIfOurs();
    } finally {
      this.leaseId = undefined;
    }
  }

  private async releaseLockIfOurs(): Promise<void> {
    const leaseId = this.leaseId;
    if (leaseId === undefined) return;
    const owner = await readOwnerAt(this.lockDir);
    if (owner?.leaseId !== leaseId) return;
    // Rename first so no contender ever sees a half-deleted lease directory.
    const aside = await this.renameLockAside('released');
    if (aside === undefined) return;
    const moved = await readOwnerAt(aside).catch(() => undefined);
    if (moved?.leaseId !== leaseId) {
      await rename(aside, this.lockDir).catch(() => {});
      return;
    }
    await rm(aside, { recursive: true, force: true });
  }

  private async writeLeaderInfo(epoch: number): Promise<void> {
    const info: LeaderInfo = {
      epoch,
      jobmasterId: this.o.contenderId,
      address: this.o.address,
      electedAtMs: this.clock.now(),
    };
    await writeFileAtomic(HaPaths.leader(this.haDir), `${JSON.stringify(info)}\n`);
  }
}
