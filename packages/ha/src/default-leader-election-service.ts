import { errorMessage, IllegalStateError, type Logger } from '@rebound/core';
import type { LeaderContender, LeaderElection } from './ha-services.js';
import type { LeaderElectionDriver, RenewOutcome } from './leader-election-driver.js';

type State = 'idle' | 'running' | 'stopped';

/**
 * Leader election over a LeaderElectionDriver (Flink's DefaultLeaderElectionService): one state
 * machine for every backend. A standby tries to acquire (polling, or when the driver's watch says
 * the leader record went away); a leader renews every renew interval and trusts its lease only up
 * to the deadline the driver last confirmed, so `hasLeadership` turns false as soon as the lease
 * may have expired (e.g. after the process was paused), before any check runs.
 *
 * Steps (acquire, renew, confirm) never overlap. Contender callbacks run one after another, never
 * concurrently with each other, and never block the steps: a slow grantLeadership must not let
 * the lease expire.
 */
export class DefaultLeaderElectionService implements LeaderElection {
  private state: State = 'idle';
  private contender: LeaderContender | undefined;
  private callbacks: Promise<void> = Promise.resolve();
  private epoch: number | undefined;
  /** Aborted the moment leadership of `epoch` ends (the contender's grant holds its signal). */
  private ended: AbortController | undefined;
  /** On the driver's clock: until when the lease of `epoch` cannot have expired. */
  private validUntil = 0;
  private previousLastHeardMs: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private inflight: Promise<void> | undefined;
  private stepAgain = false;
  private lastStepFailed = false;
  private lastError: string | undefined;
  private relinquish: { readonly epoch: number; readonly reason: string } | undefined;

  constructor(
    private readonly driver: LeaderElectionDriver,
    private readonly logger: Logger,
  ) {}

  /**
   * Starts contending. Resolves after the first attempt: by then this service either leads
   * (grantLeadership has been dispatched) or stands by.
   */
  async start(contender: LeaderContender): Promise<void> {
    if (this.state !== 'idle') throw new IllegalStateError('LeaderElectionService can be started only once');
    this.contender = contender;
    this.state = 'running';
    await this.driver.start({
      leaderMayBeFree: () => {
        if (this.state === 'running' && this.epoch === undefined) void this.step();
      },
      leadershipLost: (epoch, reason) => {
        if (this.state === 'running') void this.lose(epoch, reason, true);
      },
    });
    await this.step();
  }

  hasLeadership(): boolean {
    return this.epoch !== undefined && this.driver.now() <= this.validUntil;
  }

  currentEpoch(): number | undefined {
    return this.hasLeadership() ? this.epoch : undefined;
  }

  previousLeaderLastHeardMs(): number | undefined {
    return this.previousLastHeardMs;
  }

  /** Checks leadership with the backend now rather than at the next renewal; revokes it if it was lost. */
  async confirmLeadership(): Promise<boolean> {
    if (this.state !== 'running') return false;
    while (this.inflight) await this.inflight;
    const epoch = this.epoch;
    if (epoch === undefined || this.state !== 'running') return false;
    await this.exclusive(() => this.renewWith(epoch, (late) => this.driver.confirm(epoch, late)), false);
    return this.hasLeadership();
  }

  /** A write guarded by `epoch` was refused by the backend: leadership of that epoch ends at once. */
  onFenced(epoch: number, reason: string): void {
    if (this.state === 'running' && this.epoch === epoch) void this.lose(epoch, reason, true);
  }

  /**
   * Stops contending. A leader gives its lease up so that a standby takes over without waiting for
   * it to expire, and the contender gets revokeLeadership. Resolves when all callbacks have returned.
   */
  async stop(): Promise<void> {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    clearTimeout(this.timer);
    clearTimeout(this.deadlineTimer);
    this.timer = undefined;
    while (this.inflight) await this.inflight;
    const epoch = this.epoch;
    this.epoch = undefined;
    this.validUntil = 0;
    this.endLeadership('leader election service stopped');
    try {
      await this.driver.stop(epoch);
    } catch (err) {
      this.logger.warn({ err }, 'could not give the leader lease up; a standby takes over after the lease timeout');
    }
    if (epoch !== undefined) {
      this.logger.info({ epoch }, 'gave up leadership: leader election service stopped');
      this.notify((c) => c.revokeLeadership('leader election service stopped'));
    }
    await this.drainCallbacks();
  }

  // ---------------------------------------------------------------------------------------------
  // Steps

  /** Acquires or renews now; a request during a step runs another right after it. */
  private step(): Promise<void> {
    if (this.state !== 'running') return Promise.resolve();
    if (this.inflight) {
      this.stepAgain = true;
      return this.inflight;
    }
    return this.exclusive(async () => {
      do {
        this.stepAgain = false;
        if (this.epoch !== undefined) {
          const epoch = this.epoch;
          await this.renewWith(epoch, (late) => this.driver.renew(epoch, late));
        } else {
          await this.acquire();
        }
      } while (this.stepAgain && this.state === 'running');
    }, true);
  }

  /** Runs `op` as the one step in flight; `reschedule`: time the next step from its end. */
  private exclusive(op: () => Promise<void>, reschedule: boolean): Promise<void> {
    const run = (async () => {
      try {
        await op();
        this.lastStepFailed = false;
        this.lastError = undefined;
      } catch (err) {
        this.lastStepFailed = true;
        // Once per distinct problem: a backend down for a while would otherwise flood the log.
        const message = errorMessage(err).split('\n')[0] ?? '';
        if (message !== this.lastError) this.logger.warn({ err: message }, 'leader election step failed; retrying');
        this.lastError = message;
      } finally {
        this.inflight = undefined;
        if (this.stepAgain) void this.step();
        else if (reschedule || !this.timer) this.schedule();
      }
    })();
    this.inflight = run;
    return run;
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.state !== 'running') return;
    let delay: number | undefined;
    if (this.epoch !== undefined) delay = this.driver.policy.renewIntervalMs;
    else if (this.lastStepFailed || !this.driver.policy.watchesLeader) delay = this.driver.policy.retryIntervalMs;
    if (delay === undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.step();
    }, delay);
  }

  private async acquire(): Promise<void> {
    const grant = await this.driver.tryAcquire();
    if (!grant) return;
    const epoch = grant.epoch;
    if (this.state !== 'running') {
      await this.driver.release(epoch, true);
      return;
    }
    this.epoch = epoch;
    this.validUntil = grant.validUntil;
    this.previousLastHeardMs = grant.previousLeaderLastHeardMs;
    const ended = new AbortController();
    this.ended = ended;
    this.armDeadline();
    this.logger.info({ epoch }, 'granted leadership');
    this.notify(
      (c) => c.grantLeadership(epoch, ended.signal),
      (err) => {
        // A contender that cannot take leadership up gives it back, so that another one can.
        this.logger.error({ err, epoch }, 'grantLeadership failed; giving leadership up');
        if (this.epoch === epoch) {
          this.relinquish = { epoch, reason: `grantLeadership failed: ${errorMessage(err)}` };
          void this.step();
        }
      },
    );
  }

  private async renewWith(epoch: number, op: (late: boolean) => Promise<RenewOutcome>): Promise<void> {
    const relinquish = this.relinquish;
    this.relinquish = undefined;
    if (relinquish?.epoch === epoch) {
      await this.lose(epoch, relinquish.reason, true);
      return;
    }
    const late = this.driver.now() > this.validUntil;
    let outcome: RenewOutcome;
    try {
      outcome = await op(late);
    } catch (err) {
      if (this.epoch !== epoch) return;
      if (this.driver.now() > this.validUntil) {
        await this.lose(epoch, `cannot renew the lease (${errorMessage(err)}) and it has expired`, false);
        return;
      }
      this.logger.warn(
        { err: errorMessage(err), epoch, msLeft: Math.round(this.validUntil - this.driver.now()) },
        'could not renew the leader lease; retrying until it expires',
      );
      return;
    }
    if (this.epoch !== epoch) return;
    if ('lost' in outcome) {
      await this.lose(epoch, outcome.lost, outcome.releaseLease);
      return;
    }
    if (outcome.validUntil !== undefined) {
      this.validUntil = Math.max(this.validUntil, outcome.validUntil);
      this.armDeadline();
    }
    if (late) this.logger.info({ epoch }, 'leadership verified after a late renewal');
  }

  /** Where the driver's lease expires by itself: leadership ends at its deadline, renewed or not. */
  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    const epoch = this.epoch;
    if (!this.driver.policy.endsAtDeadline || epoch === undefined) return;
    this.deadlineTimer = setTimeout(
      () => {
        if (this.epoch !== epoch || this.state !== 'running') return;
        if (this.driver.now() <= this.validUntil) this.armDeadline();
        else
          void this.lose(
            epoch,
            `no ${this.driver.policy.name} lease renewal succeeded in time; the lease may expire`,
            true,
          );
      },
      Math.max(0, this.validUntil - this.driver.now()) + 1,
    );
  }

  /** Ends leadership of `epoch` now; the contender is told once the driver has let go of it. */
  private async lose(epoch: number, reason: string, releaseLease: boolean): Promise<void> {
    if (this.epoch !== epoch) return;
    this.epoch = undefined;
    this.validUntil = 0;
    this.previousLastHeardMs = undefined;
    this.endLeadership(reason);
    clearTimeout(this.deadlineTimer);
    clearTimeout(this.timer);
    this.timer = undefined;
    const released = this.driver
      .release(epoch, releaseLease)
      .catch((err: unknown) => this.logger.warn({ err }, 'could not give the leader lease up'));
    this.logger.warn({ epoch, reason }, 'leadership revoked; contending again');
    this.notify((c) => c.revokeLeadership(reason), undefined, released);
    await released;
    // A driver that watches the leader record campaigns again at once (its own record is gone
    // now); one that polls waits for its next poll, so a contender that gave up does not win again at once.
    if (this.driver.policy.watchesLeader && this.state === 'running') void this.step();
    else if (!this.inflight) this.schedule();
  }

  private endLeadership(reason: string): void {
    const ended = this.ended;
    this.ended = undefined;
    ended?.abort(reason);
  }

  private notify(
    call: (c: LeaderContender) => void | Promise<void>,
    onError?: (err: unknown) => void,
    after?: Promise<unknown>,
  ): void {
    const contender = this.contender;
    if (!contender) return;
    this.callbacks = this.callbacks.then(async () => {
      await after;
      try {
        await call(contender);
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
}
