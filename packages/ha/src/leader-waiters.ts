import type { LeaderInfo } from './leader-info.js';

/**
 * True when `next` is news to a follower that knows `prev`: a newer epoch, or the same epoch at
 * another address. An older epoch never is, so followers never go back to a deposed leader.
 */
export function isLeaderChange(prev: LeaderInfo | undefined, next: LeaderInfo): boolean {
  return !prev || next.epoch > prev.epoch || (next.epoch === prev.epoch && next.address !== prev.address);
}

/** Callers of `waitForLeader` of a leader retrieval service (either backend), until a leader shows up. */
export class LeaderWaiters {
  private readonly waiters = new Set<(leader: LeaderInfo) => void>();

  get size(): number {
    return this.waiters.size;
  }

  /** A leader was found: every waiter gets it. */
  resolve(leader: LeaderInfo): void {
    for (const w of this.waiters) w(leader);
  }

  /**
   * Waits for `resolve`, at most `timeoutMs` (then rejects with `timeoutError()`). `follow` runs
   * once the waiter counts in `size` (to start following the leader), `settled` after it no longer does.
   */
  async wait(
    timeoutMs: number,
    timeoutError: () => Error,
    follow: () => void,
    settled: () => void,
  ): Promise<LeaderInfo> {
    let timer: NodeJS.Timeout | undefined;
    let waiter: ((leader: LeaderInfo) => void) | undefined;
    try {
      return await new Promise<LeaderInfo>((resolve, reject) => {
        waiter = resolve;
        this.waiters.add(waiter);
        timer = setTimeout(() => reject(timeoutError()), timeoutMs);
        follow();
      });
    } finally {
      clearTimeout(timer);
      if (waiter) this.waiters.delete(waiter);
      settled();
    }
  }
}
