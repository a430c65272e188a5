import type { Clock } from './clock.js';
import type { Logger } from './logger.js';

/** A peer whose heartbeats a leader watches (a TaskManager, a shuffle worker). */
export interface HeartbeatingPeer {
  readonly id: string;
  lastHeartbeatMs: number;
}

export interface HeartbeatTimeoutsOptions {
  /** heartbeat.timeout */
  readonly timeoutMs: number;
  /** How often `expired` is called (its PeriodicTask's interval). */
  readonly checkIntervalMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

/**
 * Which peers' heartbeats timed out, judged by a process that may itself have stopped.
 *
 * A JobMaster that was SIGSTOPped, swapped out or starved of CPU for longer than the timeout
 * wakes with every peer's last heartbeat far in the past, although the peers kept sending: their
 * calls wait in the socket while Node runs the overdue timers first. Declaring them all lost
 * then resets finished work on a whim, and a deposed leader does it before it even learns that
 * it no longer leads. So a check that comes late by more than one interval forgives the peers
 * the time this process was away (as HBase's JvmPauseMonitor and Akka's failure detector treat
 * their own pauses): a dead peer is found one timeout after the stall instead of at once.
 */
export class HeartbeatTimeouts {
  private lastCheckMs: number | undefined;

  constructor(private readonly opts: HeartbeatTimeoutsOptions) {}

  /** The peers silent for longer than the timeout, not counting a stall of this process. */
  expired<P extends HeartbeatingPeer>(peers: Iterable<P>): { peer: P; silentMs: number }[] {
    const now = this.opts.clock.now();
    const stalledMs = this.lastCheckMs === undefined ? 0 : now - this.lastCheckMs - this.opts.checkIntervalMs;
    this.lastCheckMs = now;
    const all = [...peers];
    if (stalledMs > this.opts.checkIntervalMs) {
      for (const p of all) p.lastHeartbeatMs = Math.min(now, p.lastHeartbeatMs + stalledMs);
      this.opts.logger.warn(
        { stalledMs, peers: all.length },
        'this process did not run for a while: heartbeat timeouts do not count the stall',
      );
    }
    return all
      .map((peer) => ({ peer, silentMs: now - peer.lastHeartbeatMs }))
      .filter((x) => x.silentMs > this.opts.timeoutMs);
  }
}
