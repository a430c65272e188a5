import { fmix32 } from '@rebound/core/hash';
import { userCodeError } from './errors.js';

/**
 * Key hashing for HASH exchanges. Every process (client, JobMaster, each TaskManager) must route a
 * key to the same subpartition, so the hash is defined over a canonical encoding of the value and
 * not over anything process-specific. FNV-1a over tagged 16-bit/32-bit units, finished with
 * murmur3's fmix32 so that `hash % n` is well spread even for sequential integer keys.
 *
 * Canonical encoding: the type is part of the hash (1 and "1" differ); strings are hashed by
 * their UTF-16 code units (no Buffer); integers in the int32 range by value, other numbers by their
 * IEEE-754 bits (-0 as 0, one NaN); arrays element-wise; plain objects by sorted keys, skipping
 * undefined values (what JSON would keep); Dates by time; objects with toJSON() by its result.
 */

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

const TAG_STRING = 1;
const TAG_INT = 2;
const TAG_FLOAT = 3;
const TAG_TRUE = 4;
const TAG_FALSE = 5;
const TAG_NULL = 6;
const TAG_UNDEFINED = 7;
const TAG_BIGINT = 8;
const TAG_ARRAY = 9;
const TAG_OBJECT = 10;
const TAG_DATE = 11;

const MAX_DEPTH = 64;

// One shared scratch view: no allocation per number. Explicit big-endian, so hashes do not
// depend on the platform's byte order.
const scratch = new DataView(new ArrayBuffer(8));

function mix(h: number, unit: number): number {
  return Math.imul(h ^ unit, FNV_PRIME);
}

function mixString(h: number, s: string): number {
  h = mix(h, s.length);
  for (let i = 0; i < s.length; i++) h = mix(h, s.charCodeAt(i));
  return h;
}

function mixNumber(h: number, n: number): number {
  if ((n | 0) === n) return mix(mix(h, TAG_INT), n); // -0 | 0 === 0
  scratch.setFloat64(0, Number.isNaN(n) ? Number.NaN : n, false);
  return mix(mix(mix(h, TAG_FLOAT), scratch.getUint32(0, false)), scratch.getUint32(4, false));
}

function mixValue(h: number, v: unknown, depth: number): number {
  switch (typeof v) {
    case 'string':
      return mixString(mix(h, TAG_STRING), v);
    case 'number':
      return mixNumber(h, v);
    case 'boolean':
      return mix(h, v ? TAG_TRUE : TAG_FALSE);
    case 'undefined':
      return mix(h, TAG_UNDEFINED);
    case 'bigint':
      return mixString(mix(h, TAG_BIGINT), v.toString(16));
    case 'object': {
      if (v === null) return mix(h, TAG_NULL);
      if (depth >= MAX_DEPTH) throw userCodeError(`hashKey: key is nested deeper than ${MAX_DEPTH} levels (cyclic?)`);
      if (Array.isArray(v)) {
        h = mix(mix(h, TAG_ARRAY), v.length);
        for (let i = 0; i < v.length; i++) h = mixValue(h, v[i], depth + 1);
        return h;
      }
      if (v instanceof Date) return mixNumber(mix(h, TAG_DATE), v.getTime());
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return mixValue(h, toJSON.call(v), depth + 1);
      if (v instanceof Map || v instanceof Set) {
        throw userCodeError('hashKey: Map and Set keys are not supported; use an array or a plain object');
      }
      const obj = v as { [k: string]: unknown };
      const keys = Object.keys(obj).sort();
      let n = 0;
      for (const k of keys) if (obj[k] !== undefined) n++;
      h = mix(mix(h, TAG_OBJECT), n);
      for (const k of keys) {
        const val = obj[k];
        if (val === undefined) continue;
        h = mixValue(mixString(h, k), val, depth + 1);
      }
      return h;
    }
    default:
      throw userCodeError(`hashKey: a key of type ${typeof v} cannot be hashed; keys must be JSON-like values`);
  }
}

/** Stable unsigned 32-bit hash of a key (same value in every process and on every platform). */
export function hashKey(key: unknown): number {
  return fmix32(mixValue(FNV_OFFSET, key, 0));
}

/** The subpartition (0 .. numSubpartitions-1) a key is routed to. */
export function subpartitionOf(key: unknown, numSubpartitions: number): number {
  if (!(numSubpartitions >= 1))
    throw userCodeError(`subpartitionOf: numSubpartitions must be >= 1, got ${numSubpartitions}`);
  return hashKey(key) % numSubpartitions;
}

/**
 * A value usable as a Map key that identifies a key by its canonical content: primitives as they
 * are, arrays and objects as canonical JSON (prefixed with NUL so they cannot equal a string key).
 * For grouping records by key in reduce and join operators.
 */
export function groupingKey(key: unknown): unknown {
  if (typeof key !== 'object' || key === null) return key;
  return `\u0000${canonicalJson(key, 0)}`;
}

/** Canonical text of a value; every value that hashKey tells apart gets a different text. */
function canonicalJson(v: unknown, depth: number): string {
  switch (typeof v) {
    case 'string':
      return JSON.stringify(v);
    case 'number':
      return Object.is(v, -0) ? '0' : String(v); // NaN and Infinity too, unlike JSON
    case 'boolean':
      return String(v);
    case 'undefined':
      return 'undefined';
    case 'bigint':
      return `${v.toString()}n`;
    case 'object': {
      if (v === null) return 'null';
      if (depth >= MAX_DEPTH)
        throw userCodeError(`groupingKey: key is nested deeper than ${MAX_DEPTH} levels (cyclic?)`);
      if (Array.isArray(v)) return `[${v.map((e) => canonicalJson(e, depth + 1)).join(',')}]`;
      if (v instanceof Date) return `D${v.getTime()}`;
      const toJSON = (v as { toJSON?: unknown }).toJSON;
      if (typeof toJSON === 'function') return canonicalJson(toJSON.call(v), depth + 1);
      if (v instanceof Map || v instanceof Set) {
        throw userCodeError('groupingKey: Map and Set keys are not supported; use an array or a plain object');
      }
      const obj = v as { [k: string]: unknown };
      const parts: string[] = [];
      for (const k of Object.keys(obj).sort()) {
        if (obj[k] !== undefined) parts.push(`${JSON.stringify(k)}:${canonicalJson(obj[k], depth + 1)}`);
      }
      return `{${parts.join(',')}}`;
    }
    default:
      throw userCodeError(`groupingKey: a key of type ${typeof v} cannot be used; keys must be JSON-like values`);
  }
}
