import { decodeMessage, encodeMessage } from '@rebound/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { JOB_EVENT_TYPE_NAMES, JOB_EVENT_TYPES } from './job-event.js';
import { messageCodec } from './proto-codec.js';

const str = fc.string({ unit: 'grapheme', maxLength: 60 });
const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
const int64 = fc.oneof(
  fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }),
  fc.maxSafeInteger(),
  fc.constantFrom(0, 1, 127, 128, 2 ** 32 - 1, 2 ** 32, 2 ** 53 - 1, -(2 ** 53) + 1, -1),
  // Where the decoder's varint fast paths end (4 and 7 bytes).
  fc.constantFrom(
    2 ** 28 - 1,
    2 ** 28,
    2 ** 35 - 1,
    2 ** 35,
    2 ** 42 - 1,
    2 ** 42,
    2 ** 49 - 1,
    2 ** 49,
    -(2 ** 28),
    -(2 ** 49),
  ),
);
const bytes = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b));
const opt = <T>(a: fc.Arbitrary<T>) => fc.option(a, { nil: undefined });

/** Field arbitraries per message, checked against the .proto below so that no field goes ungenerated. */
const snapshotFields = { operator_id: str, state: bytes };
const snapshot = fc.record(snapshotFields, { requiredKeys: [] });
// epoch: the part of a partition's identity that keeps reruns under a new leader apart.
const partitionIdFields = { job_id: str, vertex_id: str, subtask: int32, attempt: int32, epoch: int64 };
const partitionId = fc.record(partitionIdFields, { requiredKeys: [] });

const finishedFields = {
  vertex_id: str,
  subtask: int32,
  attempt: int32,
  location: opt(fc.record({ task_manager_id: str, address: str }, { requiredKeys: [] })),
  io_metrics: opt(
    fc.record(
      {
        records_in: int64,
        records_out: int64,
        bytes_in: int64,
        bytes_out: int64,
        subpartition_bytes: fc.array(int64, { maxLength: 200 }),
      },
      { requiredKeys: [] },
    ),
  ),
  partitions: fc.array(partitionId, { maxLength: 4 }),
  coordinator_snapshots: fc.array(snapshot, { maxLength: 3 }),
  coordinator_increments: fc.array(snapshot, { maxLength: 3 }),
  shuffle_master_snapshot: bytes,
  has_shuffle_master_snapshot: fc.boolean(),
  finished_at_ms: int64,
  sink_temp_file: str,
  attempt_epoch: int64,
  shuffle_master_snapshot_incremental: fc.boolean(),
};
const finished = fc.record(finishedFields, { requiredKeys: [] });

const initializedFields = {
  vertex_id: str,
  parallelism: int32,
  inputs: fc.array(
    fc.record(
      {
        producer_vertex_id: str,
        subtask_ranges: fc.array(fc.record({ start: int32, end: int32 }, { requiredKeys: [] }), { maxLength: 40 }),
      },
      { requiredKeys: [] },
    ),
    { maxLength: 3 },
  ),
};
const initialized = fc.record(initializedFields, { requiredKeys: [] });

const resetFields = {
  vertices: fc.array(fc.record({ vertex_id: str, subtask: int32 }, { requiredKeys: [] }), { maxLength: 20 }),
};
const reset = fc.record(resetFields, { requiredKeys: [] });

const headerFields = {
  job_id: str,
  epoch: int64,
  jobmaster_id: str,
  created_at_ms: int64,
  file_index: int32,
  payload_version: int32,
  seals_earlier_files: fc.boolean(),
  sealed_files: fc.array(fc.record({ file_index: int32, length: int64 }, { requiredKeys: [] }), { maxLength: 5 }),
};
const header = fc.record(headerFields, { requiredKeys: [] });

const generated: Array<[string, object]> = [
  ['ExecutionVertexFinishedEvent', finishedFields],
  ['ResultPartitionId', partitionIdFields],
  ['OperatorCoordinatorSnapshot', snapshotFields],
  ['ExecutionJobVertexInitializedEvent', initializedFields],
  ['ExecutionVertexResetEvent', resetFields],
  ['JobEventFileHeader', headerFields],
];

const cases: Array<[string, fc.Arbitrary<object>]> = [
  ['ExecutionVertexFinishedEvent', finished],
  ['ExecutionJobVertexInitializedEvent', initialized],
  ['ExecutionVertexResetEvent', reset],
  ['JobEventFileHeader', header],
];

describe('messageCodec', () => {
  it('generates every field the .proto files define (epoch and attempt_epoch included)', () => {
    for (const [typeName, fields] of generated) {
      // Decoding no bytes with defaults gives every field of the message.
      const protoFields = Object.keys(decodeMessage<object>(typeName, new Uint8Array())).sort();
      expect(Object.keys(fields).sort(), typeName).toEqual(protoFields);
    }
  });

  it('uses the fast path for every event payload and the file header', () => {
    for (const t of JOB_EVENT_TYPE_NAMES) expect(messageCodec(JOB_EVENT_TYPES[t].message).fast).toBe(true);
    expect(messageCodec('JobEventFileHeader').fast).toBe(true);
  });

  for (const [typeName, arb] of cases) {
    it(`${typeName}: same bytes as encodeMessage and same objects as decodeMessage`, () => {
      const codec = messageCodec<object, unknown>(typeName);
      fc.assert(
        fc.property(arb, (message) => {
          const reference = encodeMessage(typeName, message);
          const ours = codec.encode(message);
          expect(Buffer.from(ours).equals(Buffer.from(reference))).toBe(true);
          expect(codec.decode(reference)).toEqual(decodeMessage(typeName, reference));
          // Decoding a sub-range of a larger buffer sees only that range.
          const framed = Buffer.concat([Buffer.from([1, 2, 3]), reference, Buffer.from([9, 9])]);
          expect(codec.decode(framed, 3, 3 + reference.length)).toEqual(decodeMessage(typeName, reference));
        }),
        { numRuns: 150 },
      );
    });
  }

  it('accepts the input forms fromObject accepts (string longs, base64 bytes)', () => {
    const codec = messageCodec<object, unknown>('ExecutionVertexFinishedEvent');
    const message = {
      vertex_id: 'v',
      finished_at_ms: '1700000000123',
      io_metrics: { bytes_out: '-5', subpartition_bytes: ['1', 2, '9007199254740991'] },
      shuffle_master_snapshot: Buffer.from('abc').toString('base64'),
    };
    expect(
      Buffer.from(codec.encode(message)).equals(Buffer.from(encodeMessage('ExecutionVertexFinishedEvent', message))),
    ).toBe(true);
  });

  it('decodes many distinct and repeated strings alike (the string cache evicts, never confuses)', () => {
    const codec = messageCodec<object, unknown>('ExecutionVertexId');
    // More distinct ids than the cache has slots, with shared prefixes and suffixes, some non-ASCII.
    const ids = Array.from({ length: 6000 }, (_, i) =>
      i % 3 === 0 ? `vertex-${i}` : i % 3 === 1 ? `${i}-tm-0000000${i % 10}` : `ü-${i}-é`,
    );
    for (let round = 0; round < 2; round++) {
      for (const [i, id] of ids.entries()) {
        const bytes = encodeMessage('ExecutionVertexId', { vertex_id: id, subtask: i });
        expect(codec.decode(bytes)).toEqual({ vertex_id: id, subtask: i });
      }
    }
  });

  it('tells apart cached strings of every length that differ in a single byte', () => {
    const codec = messageCodec<object, unknown>('ExecutionVertexId');
    // Near-duplicates of each length up to past the cache's limit, in a fixed shuffled order:
    // enough of them share a cache slot that each byte position is compared against a string
    // that differs only there.
    let seed = 24;
    const next = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return (seed >>> 8) % n;
    };
    const ids: string[] = [];
    for (let len = 1; len <= 52; len++) {
      const base = Array.from({ length: len }, () => String.fromCharCode(97 + next(26))).join('');
      for (let v = 0; v < 120; v++) {
        const at = next(len);
        ids.push(base.slice(0, at) + String.fromCharCode(65 + next(26)) + base.slice(at + 1));
      }
    }
    for (let i = ids.length - 1; i > 0; i--) {
      const j = next(i + 1);
      [ids[i], ids[j]] = [ids[j]!, ids[i]!];
    }
    const encoded = ids.map((id, i) => encodeMessage('ExecutionVertexId', { vertex_id: id, subtask: i }));
    for (let round = 0; round < 3; round++) {
      const wrong = encoded.flatMap((bytes, i) => {
        const got = (codec.decode(bytes) as { vertex_id: string }).vertex_id;
        return got === ids[i] ? [] : [`${ids[i]} decoded as ${got}`];
      });
      expect(wrong).toEqual([]);
    }
  });

  it('reads packed int64 runs mixed with unpacked elements and values beyond 2^53 as protobufjs does', () => {
    const codec = messageCodec<object, unknown>('IOMetrics');
    const packed = Buffer.from(encodeMessage('IOMetrics', { subpartition_bytes: [1, 2 ** 40, -3, 127, 128, 2 ** 28] }));
    // The same field once more, unpacked (tag 5 << 3 | 0), then packed again: all appended in order.
    const unpacked = Buffer.from([(5 << 3) | 0, 0x96, 0x01]);
    const huge = Buffer.from(
      encodeMessage('IOMetrics', { subpartition_bytes: ['18446744073709551615', '9223372036854775807'] }),
    );
    const bytes = Buffer.concat([packed, unpacked, huge]);
    expect(codec.decode(bytes)).toEqual(decodeMessage('IOMetrics', bytes));
  });

  it('does not share decoded byte fields with the input buffer', () => {
    const codec = messageCodec<object, { state: Buffer }>('OperatorCoordinatorSnapshot');
    const bytesIn = Buffer.from(
      encodeMessage('OperatorCoordinatorSnapshot', { operator_id: 'o', state: Buffer.from('xyz') }),
    );
    const decoded = codec.decode(bytesIn);
    bytesIn.fill(0);
    expect(decoded.state.toString()).toBe('xyz');
  });

  it('skips unknown fields and rejects truncated or mistyped input', () => {
    const codec = messageCodec<object, unknown>('ExecutionVertexResetEvent');
    // field 15 (varint 7), then the known repeated message field 1.
    const withUnknown = Buffer.concat([
      Buffer.from([15 << 3, 7]),
      Buffer.from(encodeMessage('ExecutionVertexResetEvent', { vertices: [{ vertex_id: 'a', subtask: 1 }] })),
    ]);
    expect(codec.decode(withUnknown)).toEqual({ vertices: [{ vertex_id: 'a', subtask: 1 }] });
    const valid = Buffer.from(
      encodeMessage('ExecutionVertexResetEvent', { vertices: [{ vertex_id: 'abc', subtask: 300 }] }),
    );
    for (let cut = 1; cut < valid.length; cut++) expect(() => codec.decode(valid.subarray(0, cut))).toThrow();
    // vertices (field 1) sent as a varint.
    expect(() => codec.decode(Buffer.from([1 << 3, 5]))).toThrow(/wire type/);
    // A string sent as a varint, an int32 as a length-delimited field, a packed int64 as fixed32.
    const id = messageCodec<object, unknown>('ExecutionVertexId');
    expect(() => id.decode(Buffer.from([1 << 3, 5]))).toThrow(/ExecutionVertexId.vertex_id: wire type 0/);
    expect(() => id.decode(Buffer.from([(2 << 3) | 2, 1, 0]))).toThrow(/ExecutionVertexId.subtask: wire type 2/);
    const metrics = messageCodec<object, unknown>('IOMetrics');
    expect(() => metrics.decode(Buffer.from([(5 << 3) | 5, 1, 2, 3, 4]))).toThrow(/subpartition_bytes: wire type 5/);
  });
});
