import { describe, expect, it } from 'vitest';
import { splitDelay } from './delayed-source.js';

describe('splitDelay', () => {
  it('gives each split a fixed delay between half and one and a half times the base', () => {
    const ids = Array.from({ length: 12 }, (_, s) => `range-${s * 2900}-${(s + 1) * 2900}`);
    const delays = ids.map((id) => splitDelay(50, id));
    expect(ids.map((id) => splitDelay(50, id))).toEqual(delays);
    for (const d of delays) {
      expect(d).toBeGreaterThanOrEqual(25);
      expect(d).toBeLessThan(76);
    }
    // Equal splits must not finish in lockstep: most delays differ.
    expect(new Set(delays).size).toBeGreaterThanOrEqual(8);
    expect(splitDelay(0, ids[0]!)).toBe(0);
  });
});
