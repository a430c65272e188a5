import { PermissionDeniedError, errorMessage, sameSecret, type Logger } from '@rebound/core';
import type { EpochFence } from './epoch-fence.js';

/**
 * Admits the calls a leader makes to a cluster member (a TaskManager, a shuffle worker): the
 * epoch says the caller is not a deposed leader (EpochFence), the session says it is a leader
 * this member registered with at all. Only leaders the member registered with learned its
 * session; a client that merely holds the cluster secret and guesses the current epoch (a small
 * number) is refused before it can change anything.
 */
export class LeaderCallGuard {
  constructor(
    readonly fence: EpochFence,
    private readonly session: string,
    /** What the member is, for log lines: "TaskManager", "shuffle worker". */
    private readonly kind: string,
    private readonly memberId: string,
    private readonly logger: Logger,
  ) {}

  /** Throws StaleEpochError / UnconfirmedEpochError / PermissionDeniedError, each logged. */
  async admit(method: string, epoch: number, session: string): Promise<void> {
    await this.admitEpoch(method, epoch);
    this.checkSession(method, session);
  }

  /** Calls from an epoch older than the newest leader known are rejected (STALE_EPOCH), and logged. */
  async admitEpoch(method: string, epoch: number): Promise<void> {
    try {
      await this.fence.admit(epoch);
    } catch (err) {
      this.logger.warn(
        { event: 'fence.reject', method, epoch, highestEpoch: this.fence.highest(), reason: errorMessage(err) },
        'rejected a call of a deposed or unknown JobMaster',
      );
      throw err;
    }
  }

  checkSession(method: string, session: string): void {
    if (sameSecret(this.session, session)) return;
    this.logger.warn(
      { event: 'session.reject', method },
      `refused a JobMaster call without this ${this.kind}'s session`,
    );
    throw new PermissionDeniedError(
      `${method} refused: the call does not carry the session ${this.memberId} registered with`,
    );
  }
}
