import protobuf from 'protobufjs';

/**
 * The protobuf wire format's write side for the JobEventStore's codec (proto-codec.ts): a
 * reusable buffer the generated encoders (proto-codegen.ts) write plain objects into, with
 * the same bytes protobufjs writes.
 */

/** Buffer's unchecked UTF-8 primitives (what protobufjs uses too); not in @types/node. */
export interface Utf8Buffer extends Buffer {
  utf8Write(s: string, offset: number, length?: number): number;
  utf8Slice(start: number, end: number): string;
}

export const TWO_32 = 4294967296;

/** A growable byte buffer with the protobuf wire primitives; reused across messages. */
export class ProtoWriter {
  buf: Utf8Buffer;
  pos = 0;

  constructor(initialCapacity = 4096) {
    this.buf = Buffer.allocUnsafe(initialCapacity) as Utf8Buffer;
  }

  reset(): void {
    this.pos = 0;
  }

  /** A copy of the bytes written since the last reset. */
  toBytes(): Uint8Array {
    return Uint8Array.prototype.slice.call(this.buf, 0, this.pos);
  }

  ensure(n: number): void {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n)) as Utf8Buffer;
      this.buf.copy(next, 0, 0, this.pos);
      this.buf = next;
    }
  }

  uint32(v: number): void {
    this.ensure(5);
    const b = this.buf;
    let p = this.pos;
    v >>>= 0;
    while (v > 127) {
      b[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    b[p++] = v;
    this.pos = p;
  }

  /** Writes the 64-bit two's-complement value `hi:lo` (both unsigned 32-bit) as a varint. */
  varint64(lo: number, hi: number): void {
    this.ensure(10);
    const b = this.buf;
    let p = this.pos;
    while (hi) {
      b[p++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    while (lo > 127) {
      b[p++] = (lo & 127) | 128;
      lo >>>= 7;
    }
    b[p++] = lo;
    this.pos = p;
  }

  /** An int64/uint64 given as a number (the common case), decimal string, bigint or Long. */
  int64(v: unknown, unsigned = false): void {
    if (typeof v === 'number') {
      if (v >= 0 && v < TWO_32 && v === Math.floor(v)) this.uint32(v);
      else writeNumberAsVarint64(this, v);
      return;
    }
    const b = toLongBits(v, unsigned);
    this.varint64(b.lo, b.hi);
  }

  int32(v: number): void {
    if (v < 0) this.varint64(v >>> 0, 0xffffffff);
    else this.uint32(v);
  }

  fixed32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32LE(v >>> 0, this.pos);
    this.pos += 4;
  }

  fixed64(lo: number, hi: number): void {
    this.ensure(8);
    this.buf.writeUInt32LE(lo >>> 0, this.pos);
    this.buf.writeUInt32LE(hi >>> 0, this.pos + 4);
    this.pos += 8;
  }

  float(v: number): void {
    this.ensure(4);
    this.buf.writeFloatLE(v, this.pos);
    this.pos += 4;
  }

  double(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  bytes(v: Uint8Array): void {
    this.uint32(v.length);
    this.ensure(v.length);
    this.buf.set(v, this.pos);
    this.pos += v.length;
  }

  string(s: string): void {
    // Up to 42 UTF-16 units encode to at most 126 bytes: a one-byte length that is patched
    // after writing saves measuring the string twice.
    const len = s.length;
    if (len < 43) {
      this.ensure(1 + len * 3);
      const b = this.buf;
      const start = this.pos + 1;
      // ASCII (ids, addresses) is copied by hand: cheaper than a call into C++ for a few bytes.
      let i = 0;
      for (; i < len; i++) {
        const c = s.charCodeAt(i);
        if (c >= 128) break;
        b[start + i] = c;
      }
      const n = i === len ? len : b.utf8Write(s, start);
      b[this.pos] = n;
      this.pos = start + n;
      return;
    }
    const n = Buffer.byteLength(s, 'utf8');
    this.uint32(n);
    this.ensure(n);
    this.buf.utf8Write(s, this.pos, n);
    this.pos += n;
  }

  /** Starts a length-delimited section; returns a mark for `endDelimited`. */
  beginDelimited(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the length of the section begun at `mark`, moving its body if the length needs more than a byte. */
  endDelimited(mark: number): void {
    const len = this.pos - mark - 1;
    if (len < 128) {
      this.buf[mark] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    this.ensure(extra);
    this.buf.copyWithin(mark + 1 + extra, mark + 1, this.pos);
    let p = mark;
    let v = len;
    while (v > 127) {
      this.buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    this.buf[p] = v;
    this.pos += extra;
  }
}

function varintSize(v: number): number {
  return v < 1 << 7 ? 1 : v < 1 << 14 ? 2 : v < 1 << 21 ? 3 : v < 1 << 28 ? 4 : 5;
}

// int64 values given as other than a number (mirrors protobufjs fromObject + encode).

const { LongBits } = protobuf.util;

interface LongStatics {
  fromValue(v: string, unsigned: boolean): { low: number; high: number; unsigned: boolean };
}

export function toLongBits(v: unknown, unsigned: boolean): protobuf.util.LongBits {
  if (typeof v === 'number') return LongBits.fromNumber(v);
  if (typeof v === 'string' || typeof v === 'bigint') {
    const Long = protobuf.util.Long as unknown as LongStatics | null;
    if (Long) {
      const l = Long.fromValue(String(v), unsigned);
      return new LongBits(l.low >>> 0, l.high >>> 0);
    }
    return LongBits.fromNumber(Number.parseInt(String(v), 10));
  }
  if (v !== null && typeof v === 'object' && 'low' in v && 'high' in v) {
    const l = v as { low: number; high: number };
    return new LongBits(l.low >>> 0, l.high >>> 0);
  }
  return LongBits.fromNumber(Number(v));
}

/** LongBits.fromNumber without allocating: the two's complement of a (truncated) number. */
function writeNumberAsVarint64(w: ProtoWriter, v: number): void {
  if (v === 0 || Number.isNaN(v)) {
    w.uint32(0);
    return;
  }
  const negative = v < 0;
  if (negative) v = -v;
  let lo = v >>> 0;
  let hi = ((v - lo) / TWO_32) >>> 0;
  if (negative) {
    hi = ~hi >>> 0;
    lo = ~lo >>> 0;
    if (++lo > 0xffffffff) {
      lo = 0;
      if (++hi > 0xffffffff) hi = 0;
    }
  }
  w.varint64(lo, hi);
}
