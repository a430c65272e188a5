import { describe, expect, it } from 'vitest';
import { ErrorCode, ReboundError } from '@rebound/core';
import { decodeRecords, encodeRecord, encodeRecords, RecordCodecError } from './codec.js';

describe('record codec', () => {
  it('round-trips JSON values, including separators and non-ASCII text inside strings', () => {
    const records: unknown[] = [
      1,
      -2.5,
      'plain',
      'with,comma\nand newline\t"quotes" \\ ',
      'ünïcödé ✓ 🚀',
      null,
      true,
      [1, [2, 'x'], {}],
      { word: 'a', count: 3, nested: { list: [1, 2] } },
      '',
      [],
    ];
    expect(decodeRecords(encodeRecords(records))).toEqual(records);
  });

  it('encodes no records as an empty payload', () => {
    expect(encodeRecords([]).length).toBe(0);
    expect(decodeRecords(Buffer.alloc(0))).toEqual([]);
  });

  it('turns undefined into null, as inside JSON arrays', () => {
    expect(decodeRecords(encodeRecords([undefined, 1]))).toEqual([null, 1]);
    expect(encodeRecord(undefined)).toBe('null');
  });

  it('per-record encoding joined with commas decodes like a block', () => {
    const records = [{ a: 1 }, 'b', [3]];
    const payload = Buffer.from(records.map(encodeRecord).join(','));
    expect(decodeRecords(payload)).toEqual(records);
    expect(payload.equals(encodeRecords(records))).toBe(true);
  });

  it('rejects records that are not JSON as user-code errors', () => {
    expect(() => encodeRecord(10n)).toThrow(ReboundError);
    try {
      encodeRecords([1, 2n]);
      expect.unreachable();
    } catch (err) {
      expect((err as ReboundError).code).toBe(ErrorCode.USER_CODE);
    }
  });

  it('reports a payload that is not record data with a typed error', () => {
    expect(() => decodeRecords(Buffer.from('{"a":'))).toThrow(RecordCodecError);
  });
});
