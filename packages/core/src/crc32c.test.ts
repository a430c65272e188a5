import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.js';

/** Bit-at-a-time reference: the definition, with no tables. */
function crc32cReference(data: Uint8Array): number {
  let c = 0xffffffff;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe('crc32c', () => {
  it('matches the published check value and the RFC 3720 (iSCSI) vectors', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => i))).toBe(0x46dd794e);
    expect(crc32c(Uint8Array.from({ length: 32 }, (_, i) => 31 - i))).toBe(0x113fdb5c);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });

  it('agrees with the bitwise definition on any input, range and split', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), fc.nat(), fc.nat(), (data, a, b) => {
        const start = data.length ? a % data.length : 0;
        const end = start + (data.length - start ? b % (data.length - start + 1) : 0);
        const slice = data.subarray(start, end);
        expect(crc32c(data, start, end)).toBe(crc32cReference(slice));
        const mid = start + Math.floor((end - start) / 2);
        expect(crc32c(data, mid, end, crc32c(data, start, mid))).toBe(crc32cReference(slice));
      }),
    );
  });
});

describe('crc32c word path', () => {
  it('agrees with the bitwise definition at every alignment, inside pooled and shared buffers', () => {
    const data = Uint8Array.from({ length: 1200 }, (_, i) => (i * 2654435761) >>> 23);
    const shared = new Uint8Array(new SharedArrayBuffer(1300));
    shared.set(data, 100);
    for (let offset = 0; offset < 8; offset++) {
      // A view that starts at an odd byte of its ArrayBuffer, as pooled Buffers do.
      const view = new Uint8Array(data.buffer, offset, data.length - offset);
      const sharedView = new Uint8Array(shared.buffer, 100 + offset, data.length - offset);
      for (const [start, end] of [
        [0, view.length],
        [1, 200],
        [3, 67],
        [5, 64 + 5],
        [7, 1000],
        [0, 63],
        [2, 80],
      ] as const) {
        const expected = crc32cReference(view.subarray(start, end));
        expect(crc32c(view, start, end)).toBe(expected);
        expect(crc32c(sharedView, start, end)).toBe(expected);
        expect(crc32c(Buffer.from(view.buffer, view.byteOffset, view.length), start, end)).toBe(expected);
      }
    }
  });
});
