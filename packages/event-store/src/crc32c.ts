/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI, ext4 and LevelDB's
 * log format. `node:zlib` only offers plain CRC-32 (and only on Node 22+), so this is a
 * slicing-by-8 table implementation: eight table look-ups per 8 input bytes keep replay
 * checksumming far below the cost of decoding.
 */

const POLY = 0x82f63b78;

const TABLES: Int32Array[] = (() => {
  const t = Array.from({ length: 8 }, () => new Int32Array(256));
  const t0 = t[0]!;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
    t0[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t0[n]!;
    for (let k = 1; k < 8; k++) {
      c = t0[c & 0xff]! ^ (c >>> 8);
      t[k]![n] = c;
    }
  }
  return t;
})();

const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [
  Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array,
];

/**
 * CRC-32C of `data[start, end)`, continuing from `crc` (the value returned for the preceding
 * bytes; 0 to begin). Returns an unsigned 32-bit number.
 */
export function crc32c(data: Uint8Array, start = 0, end = data.length, crc = 0): number {
  let c = ~crc;
  let i = start;
  const end8 = start + ((end - start) & ~7);
  while (i < end8) {
    const lo = c ^ (data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24));
    c =
      T7[lo & 0xff]! ^
      T6[(lo >>> 8) & 0xff]! ^
      T5[(lo >>> 16) & 0xff]! ^
      T4[lo >>> 24]! ^
      T3[data[i + 4]!]! ^
      T2[data[i + 5]!]! ^
      T1[data[i + 6]!]! ^
      T0[data[i + 7]!]!;
    i += 8;
  }
  while (i < end) c = T0[(c ^ data[i++]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
