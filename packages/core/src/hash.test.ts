import { describe, expect, it } from 'vitest';
import { fmix32 } from './hash.js';

describe('fmix32', () => {
  // Pinned: key partitioning and the examples' data depend on these exact bits.
  it('is murmur3 fmix32, unsigned', () => {
    expect([0, 1, 2, -1, 0xdeadbeef, 123456789].map((x) => fmix32(x))).toEqual([
      0, 0x514e28b7, 0x30f4c306, 0x81f16f39, 0x0de5c6a9, 0xba60d89a,
    ]);
  });
});
