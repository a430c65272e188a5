import type { Configuration } from '@rebound/core';

/**
 * Flink's FixedDelayRestartBackoffTimeStrategy: at most `restart-strategy.fixed-delay.attempts`
 * restarts, each not before `restart-strategy.fixed-delay.delay`.
 */
export class FixedDelayRestartBackoffTimeStrategy {
  /** Restarts that happened: a job that exhausted N attempts shows N, not N + 1. */
  restarts = 0;

  constructor(
    readonly maxRestarts: number,
    readonly delayMs: number,
  ) {}

  static fromConfig(config: Configuration): FixedDelayRestartBackoffTimeStrategy {
    return new FixedDelayRestartBackoffTimeStrategy(
      config.getInt('restart-strategy.fixed-delay.attempts'),
      config.getDurationMs('restart-strategy.fixed-delay.delay'),
    );
  }

  canRestart(): boolean {
    return this.restarts < this.maxRestarts;
  }

  notifyRestart(): void {
    this.restarts++;
  }
}
