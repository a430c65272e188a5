import { ErrorCode, ReboundError, StaleEpochError, errorMessage } from '@rebound/core';

/** The epoch of the leader the HA service records now (leader.json), read fresh; undefined if none. */
export type LeaderEpochSource = () => Promise<number | undefined>;

/** A request claimed a leader epoch that the HA service does not (yet) record. */
export class UnconfirmedEpochError extends ReboundError {
  constructor(
    readonly epoch: number,
    readonly recordedEpoch: number | undefined,
    unreadable?: unknown,
  ) {
    super(
      ErrorCode.EPOCH_UNCONFIRMED,
      unreadable === undefined
        ? `request from leader epoch ${epoch} refused: the HA service records ${recordedEpoch === undefined ? 'no leader' : `leader epoch ${recordedEpoch}`}`
        : `request from leader epoch ${epoch} refused for now: the leader record cannot be read (${errorMessage(unreadable)})`,
      unreadable === undefined ? undefined : { cause: unreadable },
    );
  }
}

/**
 * The TaskManager side of fencing: remembers the highest leader epoch seen and rejects anything
 * older, so a deposed JobMaster that wakes up cannot deploy, cancel or release anything.
 *
 * An epoch is only ever raised by the HA service's word: a request that claims a newer epoch than
 * the fence holds is admitted only once the leader record confirms a leader of at least that
 * epoch. Otherwise one forged request with epoch 9e15 would fence the real leader out for good.
 */
export class EpochFence {
  private max: number;

  constructor(
    private readonly recordedLeaderEpoch: LeaderEpochSource,
    initial = 0,
  ) {
    this.max = initial;
  }

  /**
   * Admits a call of a leader of `epoch`: equal to the highest known, or newer and confirmed by the
   * leader record. Throws StaleEpochError for a deposed leader and UnconfirmedEpochError for an
   * epoch no leader record names, or while the record cannot be read (the caller retries; an HA
   * store that is down says nothing about the caller).
   */
  async admit(epoch: number): Promise<void> {
    if (epoch < this.max) throw new StaleEpochError(epoch, this.max);
    if (epoch === this.max) return;
    let recorded: number | undefined;
    try {
      recorded = await this.recordedLeaderEpoch();
    } catch (err) {
      throw new UnconfirmedEpochError(epoch, undefined, err);
    }
    if (recorded === undefined || recorded < epoch) throw new UnconfirmedEpochError(epoch, recorded);
    this.raise(recorded);
    if (epoch < this.max) throw new StaleEpochError(epoch, this.max);
  }

  /** The HA service itself named a leader of `epoch` (the TaskManager read it in leader.json). */
  raise(epoch: number): void {
    if (epoch > this.max) this.max = epoch;
  }

  /** True when `epoch` is not older than the highest known (it may still need confirming). */
  accepts(epoch: number): boolean {
    return epoch >= this.max;
  }

  highest(): number {
    return this.max;
  }
}
