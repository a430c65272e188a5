import { jobInvalid, userCodeError } from './errors.js';
import { defaultFormat } from './dataset-checks.js';

/** The per-field reduce functions of KeyedDataSet's sum, min and max. */

/** The field of a record an aggregation works on: an index for tuples, a property name otherwise. */
export type FieldOf<T> = T extends readonly unknown[] ? number : keyof T & string;

/** A copy of `record` with `field` set: aggregations never mutate records they were given. */
export function withField<T>(record: T, field: string | number, value: unknown): T {
  if (Array.isArray(record)) {
    const copy = record.slice();
    copy[field as number] = value;
    return copy as T;
  }
  return { ...(record as object), [field]: value } as T;
}

export function numberField(record: unknown, field: string | number, op: string): number {
  const v = (record as { [k: string]: unknown } | null)?.[field as string];
  if (typeof v !== 'number') {
    throw userCodeError(
      `${op}(${JSON.stringify(field)}): field ${JSON.stringify(field)} of record ${defaultFormat(record)} is not a number`,
    );
  }
  return v;
}

export function checkField(field: unknown, op: string): string | number {
  if (!(
    (typeof field === 'number' && Number.isSafeInteger(field) && field >= 0) ||
    (typeof field === 'string' && field !== '')
  )) {
    throw jobInvalid(`${op}(field): field must be a tuple index or a property name, got ${String(field)}`);
  }
  return field;
}

/** sum(field) as a reduce: the function, its in-place form and what the combiner sums. */
export function sumReducer<T>(f: string | number): {
  fn: (a: T, b: T) => T;
  name: string;
  inPlace: { init(r: T): T; add(acc: T, r: T): void };
  sumOf: { field: string | number; value(r: T): number };
} {
  return {
    fn: (a, b) => withField(a, f, numberField(a, f, 'sum') + numberField(b, f, 'sum')),
    name: `Sum(${String(f)})`,
    inPlace: {
      init: (r) => withField(r, f, numberField(r, f, 'sum')),
      add: (acc, r) => {
        (acc as { [k: string]: number })[f as string] = numberField(acc, f, 'sum') + numberField(r, f, 'sum');
      },
    },
    sumOf: { field: f, value: (r) => numberField(r, f, 'sum') },
  };
}

/** count()'s reduce over `[key, n]` pairs, with its in-place form and what the combiner sums. */
export function countReducer<K>(): {
  fn: (a: [K, number], b: [K, number]) => [K, number];
  inPlace: { init(r: [K, number]): [K, number]; add(acc: [K, number], r: [K, number]): void };
  sumOf: { field: number; value(r: [K, number]): number };
} {
  return {
    fn: (a, b) => [a[0], a[1] + b[1]],
    inPlace: {
      init: (r) => [r[0], r[1]],
      add: (acc, r) => {
        acc[1] += r[1];
      },
    },
    sumOf: { field: 1, value: (r) => r[1] },
  };
}
