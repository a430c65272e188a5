import { fmix32 } from '@rebound/core/hash';

/**
 * The harness's only source of randomness: every fault kind, time and target of a run is drawn
 * from a PRNG seeded with the run's seed, so `--seed S --runs 1` draws the same plan again.
 */
export class Prng {
  private state: number;

  constructor(seed: number) {
    // Mix the seed once so that neighbouring seeds (S, S+1, ...) start far apart.
    this.state = fmix32((seed >>> 0) ^ Math.floor(seed / 4_294_967_296));
  }

  /** mulberry32: a float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  }

  /** An integer in [lo, hi], both inclusive. */
  int(lo: number, hi: number): number {
    if (hi < lo) throw new RangeError(`empty range [${lo}, ${hi}]`);
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}
