/**
 * The load the benchmarks run under, and the rule for judging targets: a target is marked met or
 * missed only if the 1-minute load average stayed at or below the number of cores for the whole
 * measurement (sampled every few seconds, not just at the ends). Above it other processes compete
 * for the cores, wall-clock figures say more about them than about Rebound, and the verdict is
 * `null` ("not judged"); the figures are still recorded, with the load.
 */
import { availableParallelism, loadavg } from 'node:os';

/** The stated limit: at most one runnable process per core on average. */
export function maxLoadForTargets(): number {
  return availableParallelism();
}

export interface LoadRecord {
  readonly cores: number;
  readonly maxLoadForTargets: number;
  readonly atStart: number;
  readonly atEnd: number;
  /** Highest 1-minute load average sampled during the measurement. */
  readonly max: number;
  readonly samples: number;
  /** Whether targets may be judged (max <= maxLoadForTargets). */
  readonly judged: boolean;
}

const round2 = (x: number): number => Math.round(x * 100) / 100;

/** Samples the 1-minute load average from now until stop(). */
export class LoadSampler {
  private readonly start = loadavg()[0]!;
  private max = this.start;
  private samples = 1;
  private readonly timer: NodeJS.Timeout;

  constructor(intervalMs = 5_000) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  private sample(): void {
    this.max = Math.max(this.max, loadavg()[0]!);
    this.samples++;
  }

  stop(): LoadRecord {
    clearInterval(this.timer);
    this.sample();
    const end = loadavg()[0]!;
    return {
      cores: availableParallelism(),
      maxLoadForTargets: maxLoadForTargets(),
      atStart: round2(this.start),
      atEnd: round2(end),
      max: round2(this.max),
      samples: this.samples,
      judged: this.max <= maxLoadForTargets(),
    };
  }
}

/** A target's verdict under `load`: null when the load was too high to judge it. */
export function judge(met: boolean, load: Pick<LoadRecord, 'judged'>): boolean | null {
  return load.judged ? met : null;
}

export function verdictText(met: boolean | null, load: Pick<LoadRecord, 'max' | 'maxLoadForTargets'>): string {
  if (met === null) return `NOT JUDGED (load average up to ${load.max.toFixed(2)} > ${load.maxLoadForTargets})`;
  return met ? 'met' : 'MISSED';
}
