import { describe, expect, it } from 'vitest';
import { OrphanedPartitions } from './orphaned-partitions.js';

function manualClock(start = 1_000_000): { now(): number; advance(ms: number): void } {
  let t = start;
  return { now: () => t, advance: (ms) => void (t += ms) };
}

describe('OrphanedPartitions', () => {
  it('expires a job no leader named for the timeout, counting from when it was first held', () => {
    const clock = manualClock();
    const orphans = new OrphanedPartitions(60_000, clock);
    orphans.held('a');
    clock.advance(59_999);
    expect(orphans.expired()).toEqual([]);
    // Held again (a later write): the clock does not restart.
    orphans.held('a');
    clock.advance(1);
    expect(orphans.expired()).toEqual(['a']);
  });

  it('keeps a job while leaders name it, and expires it a timeout after the last naming', () => {
    const clock = manualClock();
    const orphans = new OrphanedPartitions(60_000, clock);
    orphans.held('live');
    orphans.held('gone');
    for (let i = 0; i < 5; i++) {
      clock.advance(30_000);
      orphans.named(['live']);
    }
    expect(orphans.expired()).toEqual(['gone']);
    orphans.forget('gone');
    clock.advance(59_999);
    expect(orphans.expired()).toEqual([]);
    expect(orphans.unnamedForMs('live')).toBe(59_999);
    clock.advance(1);
    expect(orphans.expired()).toEqual(['live']);
  });

  it('ignores named jobs it does not hold, and lists expired jobs oldest first', () => {
    const clock = manualClock();
    const orphans = new OrphanedPartitions(10, clock);
    orphans.named(['never-held']);
    expect(orphans.unnamedForMs('never-held')).toBeUndefined();
    orphans.held('b');
    clock.advance(5);
    orphans.held('a');
    clock.advance(20);
    expect(orphans.expired()).toEqual(['b', 'a']);
  });
});
