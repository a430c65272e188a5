import { describe, expect, it } from 'vitest';
import { ReboundError } from './errors.js';
import { packSubpartitionBytes, unpackSubpartitionBytes } from './subpartition-bytes.js';

describe('packed subpartition bytes', () => {
  it('round-trips counts up to 2^53 - 1, from a slice of a larger buffer too', () => {
    const counts = [0, 1, 255, 2 ** 32 - 1, 2 ** 32, 5 * 2 ** 40 + 7, Number.MAX_SAFE_INTEGER];
    const packed = packSubpartitionBytes(counts);
    expect(packed.length).toBe(counts.length * 8);
    expect(unpackSubpartitionBytes(packed)).toEqual(counts);
    const framed = Buffer.concat([Buffer.from([9, 9, 9]), packed]);
    expect(unpackSubpartitionBytes(framed.subarray(3))).toEqual(counts);
  });

  it('rejects counts that are not byte counts and buffers that are not whole entries', () => {
    expect(() => packSubpartitionBytes([-1])).toThrow(ReboundError);
    expect(() => packSubpartitionBytes([1.5])).toThrow(/subpartition 0 has a byte count of 1.5/);
    expect(() => unpackSubpartitionBytes(new Uint8Array(12))).toThrow(/not a multiple of 8/);
  });
});
