import protobuf from 'protobufjs';
import { InternalError } from '@rebound/core';
import { Kind, type FieldPlan, type MessagePlan } from './proto-plan.js';
import {
  EMPTY_BUFFER,
  LONG,
  ProtoDecodeError,
  longToNumber,
  readPackedInt64,
  zigZagDecode64,
  type ProtoReader,
} from './proto-wire-reader.js';
import { toLongBits, type ProtoWriter } from './proto-wire-writer.js';

/**
 * Code generation of the JobEventStore's codec (proto-codec.ts): one encoder and one decoder
 * function per message plan (proto-plan.ts) over the wire primitives (proto-wire-*.ts), and
 * the helpers for the less common kinds that the generated code calls (mirroring protobufjs
 * fromObject + encode, and decode + toObject).
 */

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
      throw new InternalError(`${f.fullName}: no generic encoder for kind ${f.kind}`);
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
      throw new InternalError(`${f.fullName}: no generic decoder for kind ${f.kind}`);
  }
}

function wrongWireType(plan: MessagePlan, tag: number): ProtoDecodeError {
  const id = tag >>> 3;
  const f = id < 64 ? plan.fieldById[id] : plan.byIdMap.get(id);
  if (id === 0) return new ProtoDecodeError(`${plan.fullName}: field number 0`);
  return new ProtoDecodeError(`${f?.fullName ?? plan.fullName}: wire type ${tag & 7}, expected ${f?.wire}`);
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
  readPackedInt64,
  overrun: (plan: MessagePlan) => new ProtoDecodeError(`${plan.fullName}: a field overruns the message`),
  objectExpected: (f: FieldPlan) => new TypeError(`${f.fullName}: object expected`),
  arrayExpected: (f: FieldPlan) => new TypeError(`${f.fullName}: array expected`),
};

// ---------------------------------------------------------------------------------------------
// One encoder and one decoder function per message type, generated like protobufjs' own
// codegen: an object literal with every field (one hidden class, fast property stores) and a
// switch on the field number. The source is built only from field numbers, validated identifiers and
// indexes into the arrays passed in (D/E: decoders/encoders by plan id, F: field plans).

export type Decoder = (r: ProtoReader, end: number) => Record<string, unknown>;
export type Encoder = (m: Record<string, unknown>, w: ProtoWriter) => void;

const decoders: Decoder[] = [];
const encoders: Encoder[] = [];

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
  // On the field number, which V8 compiles to a jump table (the tags of a message are too sparse
  // for one: 7-12% of decoding measured); each case checks the wire type.
  src.push('    switch (tag >>> 3) {');
  plan.fields.forEach((f, i) => {
    const target = prop('o', f);
    const read = readExpr(f, i);
    const wrong = 'throw H.wrongWireType(P, tag);';
    if (f.repeated) {
      // Most repeated fields of an event hold one element: [x] allocates it at its size,
      // where a push onto the empty default reserves room for 17.
      const one = `{ const x = ${read}; const a = ${target}; if (a.length === 0) ${target} = [x]; else a.push(x); }`;
      let packed = '';
      if (f.kind === Kind.Int64 || f.kind === Kind.Uint64) {
        packed = `{ const e = r.sub(end); ${target} = H.readPackedInt64(r, e, ${target}, ${f.kind === Kind.Uint64}); if (r.pos !== e) throw H.overrun(P); }`;
      } else if (f.wire !== 2) {
        // Packed form, accepted for every packable field whatever the writer chose.
        packed = `{ const e = r.sub(end); const a = ${target}; while (r.pos < e) a.push(${read}); if (r.pos !== e) throw H.overrun(P); }`;
      }
      src.push(
        `      case ${f.id}: if (tag === ${f.tag}) ${one} else ${packed ? `if (tag === ${f.packedTag}) ${packed} else ` : ''}${wrong} break;`,
      );
    } else {
      src.push(`      case ${f.id}: if (tag !== ${f.tag}) ${wrong} ${target} = ${read}; break;`);
    }
  });
  src.push('      default:');
  src.push('        if ((tag >>> 3) === 0) throw H.wrongWireType(P, tag);');
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
        src.push(
          `    if (v.length > 0) { w.uint32(${f.packedTag}); const k = w.beginDelimited(); for (let j = 0; j < v.length; j++) ${each} w.endDelimited(k); }`,
        );
      } else {
        src.push(`    for (let j = 0; j < v.length; j++) { w.uint32(${f.tag}); ${each} }`);
      }
      src.push('  }');
    } else if (f.kind === Kind.Enum) {
      // fromObject drops unknown enum names.
      src.push(
        `  if (v != null) { const x = H.enumNumber(F[${i}], v); if (x !== undefined) { w.uint32(${f.tag}); ${writeStmt(f, i, 'x')} } }`,
      );
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
    throw new InternalError('not compiled');
  }) as Decoder;
  for (const f of plan.fields) if (f.message) compile(f.message);
  decoders[plan.id] = compileDecoder(plan);
  encoders[plan.id] = compileEncoder(plan);
}

/** The encoder and the decoder of `plan`'s fields, compiled on first use. */
export function compiledCodec(plan: MessagePlan): { encode: Encoder; decode: Decoder } {
  compile(plan);
  return { encode: encoders[plan.id]!, decode: decoders[plan.id]! };
}
