import { StaleEpochError } from '@rebound/core';

/**
 * The TaskManager side of fencing: remembers the highest leader epoch seen and rejects anything
 * older, so a deposed JobMaster that wakes up cannot deploy, cancel or release anything.
 */
export class EpochFence {
  private max: number;

  constructor(initial = 0) {
    this.max = initial;
  }

  /** Accepts `epoch` if it is not older than the highest seen (raising that); else throws StaleEpochError. */
  observe(epoch: number): void {
    if (epoch < this.max) throw new StaleEpochError(epoch, this.max);
    this.max = epoch;
  }

  /** True when `epoch` would pass observe(), without recording it. */
  accepts(epoch: number): boolean {
    return epoch >= this.max;
  }

  highest(): number {
    return this.max;
  }
}
