import { IllegalStateError } from './errors.js';

/**
 * Per-subpartition byte counts travel in GetAndRetainPartitionsWithMetrics as one `bytes` field,
 * a little-endian uint64 per subpartition, rather than as `repeated int64`: a new leader
 * receives them for every retained partition (10,000 partitions of 128 subpartitions in the
 * recovery benchmark), and decoding varints one by one into JS numbers was most of its
 * reconciliation time. As bytes they arrive as one slice, decoded only when someone reads them.
 */
export function packSubpartitionBytes(counts: readonly number[]): Buffer {
  const out = Buffer.allocUnsafe(counts.length * 8);
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (!Number.isSafeInteger(n) || n < 0) throw new IllegalStateError(`subpartition ${i} has a byte count of ${n}`);
    out.writeUInt32LE(n % 0x1_0000_0000, i * 8);
    out.writeUInt32LE(Math.floor(n / 0x1_0000_0000), i * 8 + 4);
  }
  return out;
}

export function unpackSubpartitionBytes(packed: Uint8Array): number[] {
  if (packed.length % 8 !== 0)
    throw new IllegalStateError(`packed subpartition bytes of length ${packed.length} (not a multiple of 8)`);
  const b = Buffer.from(packed.buffer, packed.byteOffset, packed.length);
  const out = new Array<number>(packed.length / 8);
  for (let i = 0; i < out.length; i++) out[i] = b.readUInt32LE(i * 8) + b.readUInt32LE(i * 8 + 4) * 0x1_0000_0000;
  return out;
}
