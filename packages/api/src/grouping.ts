import type { AggregateFunction } from './aggregations.js';
import { jobInvalid } from './errors.js';

/** groupBy's key: a field name, several, or a function of the record. */
export type GroupKey = string | readonly string[] | ((record: unknown) => unknown);

export function checkGroupKey(key: unknown): void {
  const field = (f: unknown): boolean => typeof f === 'string' && f !== '';
  if (!(typeof key === 'function' || field(key) || (Array.isArray(key) && key.length > 0 && key.every(field)))) {
    throw jobInvalid('groupBy(key): key must be a field name, an array of field names or a function');
  }
}

/**
 * A record's group key, and the key fields of a result record: the named fields (missing ones
 * as null), or `key` for a key function.
 */
export function groupKeyFunctions(key: GroupKey): {
  keyOf: (r: unknown) => unknown;
  keyFields: (k: unknown) => { [name: string]: unknown };
} {
  const keyOf: (r: unknown) => unknown =
    typeof key === 'function'
      ? key
      : typeof key === 'string'
        ? (r) => (r as { [k: string]: unknown } | null)?.[key] ?? null
        : (r) => key.map((f) => (r as { [k: string]: unknown } | null)?.[f] ?? null);
  const keyFields = (k: unknown): { [name: string]: unknown } =>
    typeof key === 'function'
      ? { key: k }
      : typeof key === 'string'
        ? { [key]: k }
        : Object.fromEntries(key.map((f, i) => [f, (k as unknown[])[i]]));
  return { keyOf, keyFields };
}

/** An aggregate's part of the operator name, e.g. `sum(amount)`. */
export function describeAggregate(f: AggregateFunction): string {
  return `${f.fn}(${f.field ?? ''})`;
}
