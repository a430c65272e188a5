import { IllegalStateError } from './errors.js';

/**
 * Per-subpartition byte counts travel in GetAndRetainPartitionsWithMetrics as one `bytes` field
 * of unsigned LEB128 varints, one per subpartition, rather than as `repeated int64`: a new leader
 * receives them for every retained partition (10,000 partitions of 128 subpartitions in the
 * recovery benchmark), and protobufjs decoding them one by one into JS numbers was most of its
 * reconciliation time. As bytes they arrive as one slice, decoded only when someone reads them;
 * as varints rather than 8 bytes each, a count below 2 MB takes 3 bytes or fewer, and the
 * report of 10,000 such partitions is 3.3 MB instead of 10 MB to encode, send and receive.
 */
export function packSubpartitionBytes(counts: readonly number[]): Buffer {
  let length = 0;
  for (let i = 0; i < counts.length; i++) {
    const n = counts[i]!;
    if (!Number.isSafeInteger(n) || n < 0) throw new IllegalStateError(`subpartition ${i} has a byte count of ${n}`);
    length += varintLength(n);
  }
  const out = Buffer.allocUnsafe(length);
  let at = 0;
  for (let n of counts) {
    // Division rather than shifts: counts go up to 2^53 - 1, past the 32 bits shifts work on.
    while (n >= 0x80) {
      out[at++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    out[at++] = n;
  }
  return out;
}

function varintLength(n: number): number {
  let length = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    length++;
  }
  return length;
}

export function unpackSubpartitionBytes(packed: Uint8Array): number[] {
  const out: number[] = [];
  let at = 0;
  while (at < packed.length) {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (at >= packed.length)
        throw new IllegalStateError(`packed subpartition bytes end inside the count of subpartition ${out.length}`);
      const b = packed[at++]!;
      n += (b & 0x7f) * scale;
      scale *= 0x80;
      if (b < 0x80) break;
      if (scale > 2 ** 49)
        throw new IllegalStateError(`packed subpartition bytes: the count of subpartition ${out.length} is too long`);
    }
    if (!Number.isSafeInteger(n))
      throw new IllegalStateError(`packed subpartition bytes: the count of subpartition ${out.length} is past 2^53`);
    out.push(n);
  }
  return out;
}
