import { describe, expect, it } from 'vitest';
import { ReboundError } from './errors.js';
import { packSubpartitionBytes, unpackSubpartitionBytes } from './subpartition-bytes.js';

describe('packed subpartition bytes', () => {
  it('round-trips counts up to 2^53 - 1, from a slice of a larger buffer too', () => {
    const counts = [
      0,
      1,
      127,
      128,
      255,
      16_383,
      16_384,
      2 ** 32 - 1,
      2 ** 32,
      5 * 2 ** 40 + 7,
      Number.MAX_SAFE_INTEGER,
    ];
    const packed = packSubpartitionBytes(counts);
    expect(unpackSubpartitionBytes(packed)).toEqual(counts);
    const framed = Buffer.concat([Buffer.from([9, 9, 9]), packed]);
    expect(unpackSubpartitionBytes(framed.subarray(3))).toEqual(counts);
    expect(unpackSubpartitionBytes(packSubpartitionBytes([]))).toEqual([]);
  });

  it('takes a byte per 7 bits of a count: 2-3 bytes for counts of a few KB, not 8', () => {
    // As protobuf writes a uint64 varint (an independent encoder of the same format).
    expect([...packSubpartitionBytes([0, 127, 128, 300, 16_384])]).toEqual([0, 127, 0x80, 1, 0xac, 2, 0x80, 0x80, 1]);
    // 2,000 to 21,050 bytes: the 96 counts below 2^14 take 2 bytes, the other 32 take 3.
    expect(packSubpartitionBytes(Array.from({ length: 128 }, (_, k) => 2_000 + k * 150)).length).toBe(96 * 2 + 32 * 3);
    expect(packSubpartitionBytes([Number.MAX_SAFE_INTEGER]).length).toBe(8);
  });

  it('rejects counts that are not byte counts and buffers that are not whole counts', () => {
    expect(() => packSubpartitionBytes([-1])).toThrow(ReboundError);
    expect(() => packSubpartitionBytes([1.5])).toThrow(/subpartition 0 has a byte count of 1.5/);
    expect(() => unpackSubpartitionBytes(Uint8Array.from([5, 0x80]))).toThrow(/end inside the count of subpartition 1/);
    expect(() => unpackSubpartitionBytes(new Uint8Array(9).fill(0xff))).toThrow(/subpartition 0 is too long/);
    expect(() => unpackSubpartitionBytes(Uint8Array.from([...new Array<number>(7).fill(0xff), 0x7f]))).toThrow(
      /past 2\^53/,
    );
  });
});
