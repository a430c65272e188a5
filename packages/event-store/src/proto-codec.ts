import { decodeMessage, encodeMessage, protobufRoot } from '@rebound/core';
import { compiledCodec } from './proto-codegen.js';
import { fullySupported, planFor } from './proto-plan.js';
import { sharedReader } from './proto-wire-reader.js';
import { ProtoWriter, type Utf8Buffer } from './proto-wire-writer.js';

export { ProtoWriter } from './proto-wire-writer.js';

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

const codecs = new Map<string, MessageCodec<object, unknown>>();

/**
 * The codec of `rebound.v1.<typeName>`. `forceGeneric` selects the protobufjs path (the
 * reference implementation, used by tests to prove both agree).
 */
export function messageCodec<In extends object, Out>(typeName: string, forceGeneric = false): MessageCodec<In, Out> {
  const key = `${typeName}|${forceGeneric}`;
  const cached = codecs.get(key);
  if (cached) return cached as unknown as MessageCodec<In, Out>;
  const type = protobufRoot().lookupType(`rebound.v1.${typeName}`);
  const plan = planFor(type);
  let codec: MessageCodec<In, Out>;
  if (!forceGeneric && fullySupported(plan)) {
    const { encode: encodeFields, decode: decodeFields } = compiledCodec(plan);
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
        // The reader keeps the last buffer (a replay's read window) until it reads another one.
        return decodeFields(sharedReader.reset(buf as Utf8Buffer, start, end), end) as Out;
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
