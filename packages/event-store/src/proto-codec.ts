import { join } from 'node:path';
import { PROTO_FILES, PROTO_ROOT, decodeMessage, encodeMessage } from '@rebound/core';
import protobuf from 'protobufjs';

/**
 * A protobuf codec for the JobEventStore's hot path, built by reflection from the same
 * proto/ definitions `encodeMessage`/`decodeMessage` use, and producing the same bytes and the
 * same decoded objects (`X__Output`: defaults filled, longs as numbers, enums as strings).
 *
 * Why not just `encodeMessage`/`decodeMessage`: those go through protobufjs message instances,
 * `fromObject`/`toObject` and a `Long` object per int64 (every subpartition byte count), which
 * caps them at ~200k finished events/s on the target machine, below the store's throughput
 * targets. This codec writes plain objects straight to bytes and reads int64 varints straight
 * into numbers. Field numbers, types and names still come only from proto/: nothing is
 * hand-copied. Message types using features this codec does not implement (maps, oneofs,
 * groups) fall back to `encodeMessage`/`decodeMessage`, so correctness never depends on it.
 */
export interface MessageCodec<In extends object, Out> {
  readonly typeName: string;
  /** False when the type fell back to the generic protobufjs path. */
  readonly fast: boolean;
  /** Appends the message's fields (no length prefix) to `writer`. */
  encodeInto(message: In, writer: ProtoWriter): void;
  encode(message: In): Uint8Array;
  /** Decodes `bytes[start, end)`. Byte fields are copied: the input may be reused afterwards. */
  decode(bytes: Uint8Array, start?: number, end?: number): Out;
}

// ---------------------------------------------------------------------------------------------
// Writer

const TWO_32 = 4294967296;
const TWO_28 = 268435456;

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

// ---------------------------------------------------------------------------------------------
// Reader

class ProtoDecodeError extends Error {}

/** Buffer's unchecked UTF-8 primitives (what protobufjs uses too); not in @types/node. */
interface Utf8Buffer extends Buffer {
  utf8Write(s: string, offset: number, length?: number): number;
  utf8Slice(start: number, end: number): string;
}

class ProtoReader {
  constructor(
    public buf: Utf8Buffer,
    public pos: number,
    public end: number,
  ) {}

  /** Points the reader at other bytes. */
  reset(buf: Utf8Buffer, pos: number, end: number): this {
    this.buf = buf;
    this.pos = pos;
    this.end = end;
    return this;
  }

  uint32(): number {
    const b = this.buf;
    let p = this.pos;
    if (p >= this.end) throw new ProtoDecodeError('truncated varint');
    let v = b[p++]!;
    if (v < 128) {
      this.pos = p;
      return v;
    }
    v &= 127;
    let shift = 7;
    for (;;) {
      if (p >= this.end) throw new ProtoDecodeError('truncated varint');
      const c = b[p++]!;
      if (shift < 28) v |= (c & 127) << shift;
      else if (shift === 28) v = (v | ((c & 15) << 28)) >>> 0;
      if (c < 128) break;
      shift += 7;
      if (shift > 63) throw new ProtoDecodeError('varint longer than 10 bytes');
    }
    this.pos = p;
    return v >>> 0;
  }

  /** Reads a varint as lo/hi words into `LONG` (avoids allocating per value). */
  varint64(): void {
    const b = this.buf;
    let p = this.pos;
    let lo = 0;
    let hi = 0;
    let i = 0;
    for (; i < 4; i++) {
      if (p >= this.end) throw new ProtoDecodeError('truncated varint');
      const c = b[p++]!;
      lo = (lo | ((c & 127) << (i * 7))) >>> 0;
      if (c < 128) {
        this.pos = p;
        LONG.lo = lo;
        LONG.hi = 0;
        return;
      }
    }
    if (p >= this.end) throw new ProtoDecodeError('truncated varint');
    let c = b[p++]!;
    lo = (lo | ((c & 127) << 28)) >>> 0;
    hi = (c & 127) >> 4;
    if (c >= 128) {
      for (i = 0; i < 5; i++) {
        if (p >= this.end) throw new ProtoDecodeError('truncated varint');
        c = b[p++]!;
        hi = (hi | ((c & 127) << (i * 7 + 3))) >>> 0;
        if (c < 128) break;
      }
      if (c >= 128) throw new ProtoDecodeError('varint longer than 10 bytes');
    }
    this.pos = p;
    LONG.lo = lo;
    LONG.hi = hi;
  }

  fixed32(): number {
    if (this.pos + 4 > this.end) throw new ProtoDecodeError('truncated fixed32');
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0;
  }

  float(): number {
    if (this.pos + 4 > this.end) throw new ProtoDecodeError('truncated float');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 4).getFloat32(0, true);
    this.pos += 4;
    return v;
  }

  double(): number {
    if (this.pos + 8 > this.end) throw new ProtoDecodeError('truncated double');
    const v = new DataView(this.buf.buffer, this.buf.byteOffset + this.pos, 8).getFloat64(0, true);
    this.pos += 8;
    return v;
  }

  /** Start of a length-delimited field's content; the reader is moved past it. */
  delimited(): number {
    const len = this.uint32();
    const start = this.pos;
    if (start + len > this.end) throw new ProtoDecodeError('length-delimited field overruns its message');
    this.pos = start + len;
    return start;
  }

  int64(): number {
    const b = this.buf;
    const p = this.pos;
    if (p + 4 <= this.end) {
      // Up to 28 bits (byte counts below 256 MiB): no 64-bit arithmetic.
      let c = b[p]!;
      if (c < 128) {
        this.pos = p + 1;
        return c;
      }
      let v = c & 127;
      c = b[p + 1]!;
      v |= (c & 127) << 7;
      if (c < 128) {
        this.pos = p + 2;
        return v;
      }
      c = b[p + 2]!;
      v |= (c & 127) << 14;
      if (c < 128) {
        this.pos = p + 3;
        return v;
      }
      c = b[p + 3]!;
      v |= (c & 127) << 21;
      if (c < 128) {
        this.pos = p + 4;
        return v;
      }
      // Up to 49 bits (millisecond timestamps, byte totals) in double arithmetic: exact, and
      // below the sign bit that only a 10-byte varint reaches.
      if (p + 7 <= this.end) {
        c = b[p + 4]!;
        let high = c & 127;
        if (c < 128) {
          this.pos = p + 5;
          return v + high * TWO_28;
        }
        c = b[p + 5]!;
        high += (c & 127) * 128;
        if (c < 128) {
          this.pos = p + 6;
          return v + high * TWO_28;
        }
        c = b[p + 6]!;
        high += (c & 127) * 16384;
        if (c < 128) {
          this.pos = p + 7;
          return v + high * TWO_28;
        }
      }
    }
    this.varint64();
    return longToNumber(LONG.lo, LONG.hi, false);
  }

  uint64(): number {
    this.varint64();
    return longToNumber(LONG.lo, LONG.hi, true);
  }

  bool(): boolean {
    this.varint64();
    return LONG.lo !== 0 || LONG.hi !== 0;
  }

  string(): string {
    const start = this.delimited();
    const end = this.pos;
    const len = end - start;
    if (len === 0) return '';
    if (len > INTERN_MAX_BYTES) return this.buf.utf8Slice(start, end);
    return internedString(this.buf, start, end);
  }

  /** A copy: the decoded message must not alias a read buffer that is reused. */
  bytes(): Buffer {
    const start = this.delimited();
    return start === this.pos ? EMPTY_BUFFER : Buffer.from(this.buf.subarray(start, this.pos));
  }

  /** Reads a length prefix and returns where that sub-message (or packed run) ends. */
  sub(parentEnd: number): number {
    const len = this.uint32();
    const end = this.pos + len;
    if (end > parentEnd) throw new ProtoDecodeError('length-delimited field overruns its message');
    return end;
  }

  skip(wireType: number): void {
    switch (wireType) {
      case 0:
        this.varint64();
        return;
      case 1:
        if (this.pos + 8 > this.end) throw new ProtoDecodeError('truncated fixed64');
        this.pos += 8;
        return;
      case 2:
        this.delimited();
        return;
      case 5:
        if (this.pos + 4 > this.end) throw new ProtoDecodeError('truncated fixed32');
        this.pos += 4;
        return;
      default:
        throw new ProtoDecodeError(`unsupported wire type ${wireType}`);
    }
  }
}

const LONG = { lo: 0, hi: 0 };

/** The reader of every fast decode: decoding never re-enters, and this saves an object per event. */
const sharedReader = new ProtoReader(Buffer.alloc(0) as Utf8Buffer, 0, 0);

// Short strings repeat across a job's events (vertex, TaskManager and job ids, addresses):
// a small direct-mapped cache from bytes to the decoded string saves a call into C++ and an
// allocation per field on replay. Equal bytes always decode to an equal string, so a hit is
// exactly what utf8Slice would have returned; a collision merely evicts.
const INTERN_SLOTS = 2048;
const INTERN_MAX_BYTES = 48;
const internBytes = new Uint8Array(INTERN_SLOTS * INTERN_MAX_BYTES);
const internLength = new Int32Array(INTERN_SLOTS).fill(-1);
const internText: string[] = new Array<string>(INTERN_SLOTS).fill('');

function internedString(b: Utf8Buffer, start: number, end: number): string {
  const len = end - start;
  // Hashes at most the first and last 8 bytes (ids differ at their ends): bounded work per field.
  let h = Math.imul(len, 0x9e3779b1);
  const headEnd = len > 8 ? start + 8 : end;
  for (let i = start; i < headEnd; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  for (let i = len > 16 ? end - 8 : headEnd; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
  const slot = (h ^ (h >>> 16)) & (INTERN_SLOTS - 1);
  const base = slot * INTERN_MAX_BYTES;
  if (internLength[slot] === len) {
    let i = 0;
    while (i < len && internBytes[base + i] === b[start + i]) i++;
    if (i === len) return internText[slot]!;
  }
  const s = b.utf8Slice(start, end);
  for (let i = 0; i < len; i++) internBytes[base + i] = b[start + i]!;
  internLength[slot] = len;
  internText[slot] = s;
  return s;
}

// Packed int64 runs (IOMetrics.subpartition_bytes: one per subpartition, the bulk of a
// finished event) are decoded into this scratch array and copied out at their exact size:
// cheaper than growing the result by push, and the copy of a packed number array is a memcpy.
let packedScratch: number[] = [];

/**
 * Reads the packed varints of an int64 (or uint64) field up to `e` and returns `into` with
 * them appended (a new array when `into` is empty, the usual case).
 */
function readPackedInt64(r: ProtoReader, e: number, into: number[], unsigned: boolean): number[] {
  const b = r.buf;
  const s = packedScratch;
  let p = r.pos;
  let n = 0;
  while (p < e) {
    // Values below 2^28 (byte counts under 256 MiB) need no 64-bit arithmetic.
    if (p + 4 <= e) {
      let c = b[p]!;
      if (c < 128) {
        s[n++] = c;
        p += 1;
        continue;
      }
      let v = c & 127;
      c = b[p + 1]!;
      if (c < 128) {
        s[n++] = v | (c << 7);
        p += 2;
        continue;
      }
      v |= (c & 127) << 7;
      c = b[p + 2]!;
      if (c < 128) {
        s[n++] = v | (c << 14);
        p += 3;
        continue;
      }
      v |= (c & 127) << 14;
      c = b[p + 3]!;
      if (c < 128) {
        s[n++] = v | (c << 21);
        p += 4;
        continue;
      }
    }
    r.pos = p;
    r.varint64();
    s[n++] = longToNumber(LONG.lo, LONG.hi, unsigned);
    p = r.pos;
  }
  r.pos = p;
  let out: number[];
  if (into.length === 0) {
    out = s.slice(0, n);
  } else {
    out = into;
    for (let i = 0; i < n; i++) out.push(s[i]!);
  }
  // Do not keep a huge scratch alive after an unusually long run.
  if (s.length > 65536) packedScratch = [];
  return out;
}

function longToNumber(lo: number, hi: number, unsigned: boolean): number {
  if (!unsigned && hi >>> 31) {
    lo = (~lo + 1) >>> 0;
    hi = ~hi >>> 0;
    if (!lo) hi = (hi + 1) >>> 0;
    return -(lo + hi * TWO_32);
  }
  return lo + hi * TWO_32;
}

function zigZagDecode64(lo: number, hi: number): number {
  const mask = -(lo & 1);
  const nlo = (((lo >>> 1) | (hi << 31)) ^ mask) >>> 0;
  const nhi = ((hi >>> 1) ^ mask) >>> 0;
  return longToNumber(nlo, nhi, false);
}

// ---------------------------------------------------------------------------------------------
// Plans built from reflection

const enum Kind {
  Double, Float, Int32, Uint32, Sint32, Fixed32, Sfixed32,
  Int64, Uint64, Sint64, Fixed64, Sfixed64, Bool, String, Bytes, Enum, Message,
}

const KIND_OF: Record<string, Kind> = {
  double: Kind.Double, float: Kind.Float, int32: Kind.Int32, uint32: Kind.Uint32,
  sint32: Kind.Sint32, fixed32: Kind.Fixed32, sfixed32: Kind.Sfixed32, int64: Kind.Int64,
  uint64: Kind.Uint64, sint64: Kind.Sint64, fixed64: Kind.Fixed64, sfixed64: Kind.Sfixed64,
  bool: Kind.Bool, string: Kind.String, bytes: Kind.Bytes,
};

/** Wire type of a single (unpacked) value of each kind. */
const WIRE_OF: Record<Kind, number> = {
  [Kind.Double]: 1, [Kind.Float]: 5, [Kind.Int32]: 0, [Kind.Uint32]: 0, [Kind.Sint32]: 0,
  [Kind.Fixed32]: 5, [Kind.Sfixed32]: 5, [Kind.Int64]: 0, [Kind.Uint64]: 0, [Kind.Sint64]: 0,
  [Kind.Fixed64]: 1, [Kind.Sfixed64]: 1, [Kind.Bool]: 0, [Kind.String]: 2, [Kind.Bytes]: 2,
  [Kind.Enum]: 0, [Kind.Message]: 2,
};

interface FieldPlan {
  readonly name: string;
  readonly id: number;
  readonly kind: Kind;
  readonly repeated: boolean;
  readonly packed: boolean;
  readonly tag: number;
  readonly packedTag: number;
  readonly wire: number;
  readonly fullName: string;
  message?: MessagePlan;
  enumValues?: Record<string, number>;
  enumNames?: Record<number, string>;
  enumDefault?: string;
}

interface MessagePlan {
  readonly id: number;
  readonly fullName: string;
  /** Sorted by field number: the order protobufjs writes them in. */
  fields: FieldPlan[];
  /** fieldById[id] for small ids; larger ids go through byIdMap. */
  fieldById: (FieldPlan | undefined)[];
  byIdMap: Map<number, FieldPlan>;
  supported: boolean;
}

let root: protobuf.Root | undefined;

function protoRoot(): protobuf.Root {
  if (!root) {
    const r = new protobuf.Root();
    r.resolvePath = (_origin, target) => (target.startsWith('/') ? target : join(PROTO_ROOT, target));
    r.loadSync(PROTO_FILES, { keepCase: true });
    r.resolveAll();
    root = r;
  }
  return root;
}

const plans = new Map<string, MessagePlan>();

function planFor(type: protobuf.Type): MessagePlan {
  const cached = plans.get(type.fullName);
  if (cached) return cached;
  const plan: MessagePlan = { id: plans.size, fullName: type.fullName, fields: [], fieldById: [], byIdMap: new Map(), supported: true };
  // Registered before its fields so that recursive types terminate.
  plans.set(type.fullName, plan);
  if (type.oneofsArray.length > 0) plan.supported = false;
  const sorted = type.fieldsArray.slice().sort((a, b) => a.id - b.id);
  for (const f of sorted) {
    f.resolve();
    if (f.map || f.delimited || f.partOf || !IDENTIFIER.test(f.name)) {
      plan.supported = false;
      continue;
    }
    let kind: Kind;
    const field: Partial<FieldPlan> & { name: string } = { name: f.name };
    if (f.resolvedType instanceof protobuf.Enum) {
      kind = Kind.Enum;
      field.enumValues = f.resolvedType.values;
      field.enumNames = f.resolvedType.valuesById;
      field.enumDefault = f.resolvedType.valuesById[f.typeDefault as number] ?? String(f.typeDefault);
    } else if (f.resolvedType instanceof protobuf.Type) {
      kind = Kind.Message;
      const sub = planFor(f.resolvedType);
      field.message = sub;
    } else {
      const k = KIND_OF[f.type];
      if (k === undefined) {
        plan.supported = false;
        continue;
      }
      kind = k;
    }
    const wire = WIRE_OF[kind];
    const packable = kind !== Kind.String && kind !== Kind.Bytes && kind !== Kind.Message;
    const full: FieldPlan = {
      ...field,
      name: f.name,
      id: f.id,
      kind,
      repeated: f.repeated,
      packed: f.repeated && f.packed && packable,
      tag: ((f.id << 3) | wire) >>> 0,
      packedTag: ((f.id << 3) | 2) >>> 0,
      wire,
      fullName: f.fullName.replace(/^\./, ''),
    };
    plan.fields.push(full);
    if (f.id < 64) plan.fieldById[f.id] = full;
    else plan.byIdMap.set(f.id, full);
  }
  return plan;
}

/** A plan is usable only if every message type reachable from it is supported. */
function fullySupported(plan: MessagePlan, seen = new Set<MessagePlan>()): boolean {
  if (seen.has(plan)) return true;
  seen.add(plan);
  if (!plan.supported) return false;
  return plan.fields.every((f) => !f.message || fullySupported(f.message, seen));
}

// ---------------------------------------------------------------------------------------------
// Value conversion (mirrors protobufjs fromObject + encode, and decode + toObject)

const { LongBits } = protobuf.util;

interface LongStatics {
  fromValue(v: string, unsigned: boolean): { low: number; high: number; unsigned: boolean };
}

function toLongBits(v: unknown, unsigned: boolean): protobuf.util.LongBits {
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

/** Writes one value of the less common kinds (the generated encoders inline the common ones). */
function encodeValue(f: FieldPlan, v: unknown, w: ProtoWriter): void {
  switch (f.kind) {
    case Kind.Double:
      w.double(Number(v));
      return;
    case Kind.Float:
      w.float(Number(v));
      return;
    case Kind.Sint32: {
      const n = (v as number) | 0;
      w.uint32(((n << 1) ^ (n >> 31)) >>> 0);
      return;
    }
    case Kind.Fixed32:
      w.fixed32((v as number) >>> 0);
      return;
    case Kind.Sfixed32:
      w.fixed32((v as number) | 0);
      return;
    case Kind.Sint64: {
      const b = toLongBits(v, false).zzEncode();
      w.varint64(b.lo, b.hi);
      return;
    }
    case Kind.Fixed64:
    case Kind.Sfixed64: {
      const b = toLongBits(v, f.kind === Kind.Fixed64);
      w.fixed64(b.lo, b.hi);
      return;
    }
    default:
      throw new Error(`${f.fullName}: no generic encoder for kind ${f.kind}`);
  }
}

function encodeBytes(v: unknown, w: ProtoWriter): void {
  if (typeof v === 'string') {
    const bytes = new Uint8Array(protobuf.util.base64.length(v));
    protobuf.util.base64.decode(v, bytes, 0);
    w.bytes(bytes);
  } else {
    w.bytes(v as Uint8Array);
  }
}

/** The numeric value of an enum given by name or number; undefined for unknown names. */
function enumNumber(f: FieldPlan, v: unknown): number | undefined {
  return typeof v === 'number' ? v : f.enumValues![v as string];
}

function enumName(f: FieldPlan, n: number): string | number {
  const name = f.enumNames![n];
  return name === undefined ? n : name;
}

/** Reads one value of the less common kinds. */
function readValue(f: FieldPlan, r: ProtoReader): unknown {
  switch (f.kind) {
    case Kind.Double:
      return r.double();
    case Kind.Float:
      return r.float();
    case Kind.Sint32: {
      const n = r.uint32();
      return ((n >>> 1) ^ -(n & 1)) | 0;
    }
    case Kind.Fixed32:
      return r.fixed32();
    case Kind.Sfixed32:
      return r.fixed32() | 0;
    case Kind.Sint64:
      r.varint64();
      return zigZagDecode64(LONG.lo, LONG.hi);
    case Kind.Fixed64: {
      const lo = r.fixed32();
      return longToNumber(lo, r.fixed32(), true);
    }
    case Kind.Sfixed64: {
      const lo = r.fixed32();
      return longToNumber(lo, r.fixed32(), false);
    }
    default:
      throw new Error(`${f.fullName}: no generic decoder for kind ${f.kind}`);
  }
}

const EMPTY_BUFFER = Buffer.alloc(0);

function wrongWireType(plan: MessagePlan, tag: number): ProtoDecodeError {
  const id = tag >>> 3;
  const f = id < 64 ? plan.fieldById[id] : plan.byIdMap.get(id);
  if (id === 0) return new ProtoDecodeError(`${plan.fullName}: field number 0`);
  return new ProtoDecodeError(`${f?.fullName ?? plan.fullName}: wire type ${tag & 7}, expected ${f?.wire}`);
}

function isKnownField(plan: MessagePlan, id: number): boolean {
  return (id < 64 ? plan.fieldById[id] : plan.byIdMap.get(id)) !== undefined;
}

/** What the generated code reaches through its `H` argument. */
const HELPERS = {
  EMPTY_BUFFER,
  encodeValue,
  encodeBytes,
  enumNumber,
  enumName,
  readValue,
  wrongWireType,
  isKnownField,
  readPackedInt64,
  overrun: (plan: MessagePlan) => new ProtoDecodeError(`${plan.fullName}: a field overruns the message`),
  objectExpected: (f: FieldPlan) => new TypeError(`${f.fullName}: object expected`),
  arrayExpected: (f: FieldPlan) => new TypeError(`${f.fullName}: array expected`),
};

// ---------------------------------------------------------------------------------------------
// Code generation
//
// One encoder and one decoder function per message type, generated like protobufjs' own
// codegen: an object literal with every field (one hidden class, fast property stores) and a
// switch on the tag. The source is built only from field numbers, validated identifiers and
// indexes into the arrays passed in (D/E: decoders/encoders by plan id, F: field plans).

type Decoder = (r: ProtoReader, end: number) => Record<string, unknown>;
type Encoder = (m: Record<string, unknown>, w: ProtoWriter) => void;

const decoders: Decoder[] = [];
const encoders: Encoder[] = [];

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function prop(obj: string, f: FieldPlan): string {
  return `${obj}[${JSON.stringify(f.name)}]`;
}

function defaultExpr(f: FieldPlan): string {
  if (f.repeated) return '[]';
  switch (f.kind) {
    case Kind.String:
      return "''";
    case Kind.Bool:
      return 'false';
    case Kind.Bytes:
      return 'H.EMPTY_BUFFER';
    case Kind.Message:
      return 'null';
    case Kind.Enum:
      return JSON.stringify(f.enumDefault);
    default:
      return '0';
  }
}

/** Expression reading one value of field `f` (index `i` in the plan's fields) from `r`. */
function readExpr(f: FieldPlan, i: number): string {
  switch (f.kind) {
    case Kind.String:
      return 'r.string()';
    case Kind.Bytes:
      return 'r.bytes()';
    case Kind.Int32:
      return '(r.uint32() | 0)';
    case Kind.Uint32:
      return 'r.uint32()';
    case Kind.Int64:
      return 'r.int64()';
    case Kind.Uint64:
      return 'r.uint64()';
    case Kind.Bool:
      return 'r.bool()';
    case Kind.Enum:
      return `H.enumName(F[${i}], r.uint32() | 0)`;
    case Kind.Message:
      return `D[${f.message!.id}](r, r.sub(end))`;
    default:
      return `H.readValue(F[${i}], r)`;
  }
}

function compileDecoder(plan: MessagePlan): Decoder {
  const src: string[] = [];
  src.push('return function decode(r, end) {');
  src.push(`  const o = { ${plan.fields.map((f) => `${JSON.stringify(f.name)}: ${defaultExpr(f)}`).join(', ')} };`);
  src.push('  while (r.pos < end) {');
  src.push('    const tag = r.uint32();');
  src.push('    switch (tag) {');
  plan.fields.forEach((f, i) => {
    const target = prop('o', f);
    const read = readExpr(f, i);
    if (f.repeated) {
      // Most repeated fields of an event hold one element: [x] allocates it at its size,
      // where a push onto the empty default reserves room for 17.
      src.push(`      case ${f.tag}: { const x = ${read}; const a = ${target}; if (a.length === 0) ${target} = [x]; else a.push(x); break; }`);
      if (f.kind === Kind.Int64 || f.kind === Kind.Uint64) {
        src.push(`      case ${f.packedTag}: { const e = r.sub(end); ${target} = H.readPackedInt64(r, e, ${target}, ${f.kind === Kind.Uint64}); if (r.pos !== e) throw H.overrun(P); break; }`);
      } else if (f.wire !== 2) {
        // Packed form, accepted for every packable field whatever the writer chose.
        src.push(`      case ${f.packedTag}: { const e = r.sub(end); const a = ${target}; while (r.pos < e) a.push(${read}); if (r.pos !== e) throw H.overrun(P); break; }`);
      }
    } else {
      src.push(`      case ${f.tag}: ${target} = ${read}; break;`);
    }
  });
  src.push('      default:');
  src.push('        if ((tag >>> 3) === 0 || H.isKnownField(P, tag >>> 3)) throw H.wrongWireType(P, tag);');
  src.push('        r.skip(tag & 7);');
  src.push('    }');
  src.push('  }');
  src.push('  if (r.pos !== end) throw H.overrun(P);');
  src.push('  return o;');
  src.push('};');
  return new Function('D', 'H', 'F', 'P', src.join('\n'))(decoders, HELPERS, plan.fields, plan) as Decoder;
}

/** Statements writing value `v` of field `f` (index `i`), its tag already written. */
function writeStmt(f: FieldPlan, i: number, v: string): string {
  switch (f.kind) {
    case Kind.String:
      return `w.string(typeof ${v} === 'string' ? ${v} : String(${v}));`;
    case Kind.Bytes:
      return `H.encodeBytes(${v}, w);`;
    case Kind.Int32:
      return `w.int32(${v} | 0);`;
    case Kind.Uint32:
      return `w.uint32(${v} >>> 0);`;
    case Kind.Int64:
      return `w.int64(${v}, false);`;
    case Kind.Uint64:
      return `w.int64(${v}, true);`;
    case Kind.Bool:
      return `w.uint32(${v} ? 1 : 0);`;
    case Kind.Enum:
      return `w.int32(${v} | 0);`;
    case Kind.Message:
      return `if (typeof ${v} !== 'object') throw H.objectExpected(F[${i}]); { const k = w.beginDelimited(); E[${f.message!.id}](${v}, w); w.endDelimited(k); }`;
    default:
      return `H.encodeValue(F[${i}], ${v}, w);`;
  }
}

function compileEncoder(plan: MessagePlan): Encoder {
  const src: string[] = [];
  src.push('return function encode(m, w) {');
  src.push('  let v;');
  plan.fields.forEach((f, i) => {
    src.push(`  v = ${prop('m', f)};`);
    if (f.repeated) {
      src.push(`  if (v != null) {`);
      src.push(`    if (!Array.isArray(v)) throw H.arrayExpected(F[${i}]);`);
      const each =
        f.kind === Kind.Enum
          ? `{ const x = H.enumNumber(F[${i}], v[j]) ?? 0; ${writeStmt(f, i, 'x')} }`
          : `{ const x = v[j]; ${writeStmt(f, i, 'x')} }`;
      if (f.packed) {
        src.push(`    if (v.length > 0) { w.uint32(${f.packedTag}); const k = w.beginDelimited(); for (let j = 0; j < v.length; j++) ${each} w.endDelimited(k); }`);
      } else {
        src.push(`    for (let j = 0; j < v.length; j++) { w.uint32(${f.tag}); ${each} }`);
      }
      src.push('  }');
    } else if (f.kind === Kind.Enum) {
      // fromObject drops unknown enum names.
      src.push(`  if (v != null) { const x = H.enumNumber(F[${i}], v); if (x !== undefined) { w.uint32(${f.tag}); ${writeStmt(f, i, 'x')} } }`);
    } else {
      src.push(`  if (v != null) { w.uint32(${f.tag}); ${writeStmt(f, i, 'v')} }`);
    }
  });
  src.push('};');
  return new Function('E', 'H', 'F', src.join('\n'))(encoders, HELPERS, plan.fields) as Encoder;
}

/** Compiles `plan` and every message type it reaches (once each). */
function compile(plan: MessagePlan): void {
  if (decoders[plan.id]) return;
  // Placeholders first so that recursive types terminate.
  decoders[plan.id] = (() => {
    throw new Error('not compiled');
  }) as Decoder;
  for (const f of plan.fields) if (f.message) compile(f.message);
  decoders[plan.id] = compileDecoder(plan);
  encoders[plan.id] = compileEncoder(plan);
}

// ---------------------------------------------------------------------------------------------

const codecs = new Map<string, MessageCodec<object, unknown>>();

/**
 * The codec of `rebound.v1.<typeName>`. `forceGeneric` selects the protobufjs path (the
 * reference implementation, used by tests to prove both agree).
 */
export function messageCodec<In extends object, Out>(typeName: string, forceGeneric = false): MessageCodec<In, Out> {
  const key = `${typeName}|${forceGeneric}`;
  const cached = codecs.get(key);
  if (cached) return cached as unknown as MessageCodec<In, Out>;
  const type = protoRoot().lookupType(`rebound.v1.${typeName}`);
  const plan = planFor(type);
  let codec: MessageCodec<In, Out>;
  if (!forceGeneric && fullySupported(plan)) {
    compile(plan);
    const encodeFields = encoders[plan.id]!;
    const decodeFields = decoders[plan.id]!;
    const scratch = new ProtoWriter();
    codec = {
      typeName,
      fast: true,
      encodeInto(message, writer) {
        encodeFields(message as Record<string, unknown>, writer);
      },
      encode(message) {
        scratch.reset();
        encodeFields(message as Record<string, unknown>, scratch);
        return scratch.toBytes();
      },
      decode(bytes, start = 0, end = bytes.length) {
        const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        try {
          return decodeFields(sharedReader.reset(buf as Utf8Buffer, start, end), end) as Out;
        } finally {
          // Not to keep a read window alive between decodes.
          sharedReader.buf = EMPTY_BUFFER as Utf8Buffer;
        }
      },
    };
  } else {
    codec = {
      typeName,
      fast: false,
      encodeInto(message, writer) {
        const bytes = encodeMessage(typeName, message);
        writer.ensure(bytes.length);
        writer.buf.set(bytes, writer.pos);
        writer.pos += bytes.length;
      },
      encode(message) {
        return encodeMessage(typeName, message);
      },
      decode(bytes, start = 0, end = bytes.length) {
        return decodeMessage<Out>(typeName, start === 0 && end === bytes.length ? bytes : bytes.subarray(start, end));
      },
    };
  }
  codecs.set(key, codec as unknown as MessageCodec<object, unknown>);
  return codec;
}
