import { ErrorCode, ReboundError, UserCodeError } from '@rebound/core';

/**
 * Record encoding of partition blocks: the JSON text of each record, separated by ','. A block
 * payload is therefore the body of a JSON array, and a whole block decodes with one
 * `JSON.parse('[' + payload + ']')`, which measured ~2x faster on Node 20 than newline-separated
 * JSON (split + join or replaceAll before the parse, or one JSON.parse per line).
 *
 * `undefined` (and anything else JSON.stringify drops) becomes `null`, as it does inside arrays.
 */

const COMMA = 0x2c;
export const RECORD_SEPARATOR = COMMA;

export class RecordCodecError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.INTERNAL, message, options);
  }
}

/** The JSON text of one record. User records that cannot be encoded are a user-code failure. */
export function encodeRecord(record: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(record);
  } catch (err) {
    throw new UserCodeError(
      `record cannot be encoded as JSON (${err instanceof Error ? err.message : String(err)}); records must be JSON values`,
      { cause: err },
    );
  }
  return text ?? 'null';
}

/** Encodes records as one block payload. */
export function encodeRecords(records: readonly unknown[]): Buffer {
  if (records.length === 0) return Buffer.alloc(0);
  let text: string;
  try {
    // One stringify of the array is the fastest encoder; the brackets are not part of a payload.
    text = JSON.stringify(records);
  } catch (err) {
    throw new UserCodeError(`records cannot be encoded as JSON: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
  return Buffer.from(text.slice(1, -1), 'utf8');
}

/** Decodes one block payload. */
export function decodeRecords(payload: Uint8Array): unknown[] {
  if (payload.length === 0) return [];
  const buf = Buffer.isBuffer(payload) ? payload : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  try {
    return JSON.parse(`[${buf.toString('utf8')}]`) as unknown[];
  } catch (err) {
    throw new RecordCodecError(`block payload of ${buf.length} bytes is not valid record data: ${String(err)}`, {
      cause: err,
    });
  }
}
