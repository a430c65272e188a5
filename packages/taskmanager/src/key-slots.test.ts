import { describe, expect, it } from 'vitest';
import { KeySlots } from './key-slots.js';

describe('KeySlots', () => {
  it('numbers keys in first-seen order exactly as a Map would, across growth, mixed key types and clear()', () => {
    const slots = new KeySlots();
    for (let round = 0; round < 2; round++) {
      const reference = new Map<unknown, number>();
      const keys: unknown[] = [];
      for (let i = 0; i < 60_000; i++) {
        const r = (i * 7919) % 20_011;
        // Strings that differ in one code unit, non-BMP text, the empty string, numbers that look
        // like strings, -0 and NaN (one key each, as in a Map).
        keys.push(r % 5 === 0 ? r : r % 7 === 0 ? `${r}` : r % 11 === 0 ? `😀${r}é` : `w${r}`);
      }
      keys.push('', '', -0, 0, Number.NaN, Number.NaN, null, undefined, true);
      let next = 0;
      for (const k of keys) {
        const expected = reference.get(k) ?? reference.size;
        reference.set(k, expected);
        const slot = slots.slotOf(k, next);
        expect(slot).toBe(expected);
        if (slot === next) next++;
      }
      expect(next).toBe(reference.size);
      slots.clear();
    }
  }, 60_000); // CPU-bound: 2 s alone, past 20 s at a load of 25 on two cores
});
