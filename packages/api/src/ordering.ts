import { jobInvalid, userCodeError } from './errors.js';

export type Order = 'asc' | 'desc';

function rank(v: unknown): number {
  switch (typeof v) {
    case 'boolean':
      return 1;
    case 'number':
      return 2;
    case 'bigint':
      return 2;
    case 'string':
      return 3;
    default:
      if (Array.isArray(v)) return 4;
      throw userCodeError(
        `sort key ${JSON.stringify(v)}: keys must be numbers, strings, booleans, null or arrays of them`,
      );
  }
}

/**
 * Order of sort keys: null (and undefined) last in either direction, as SQL's default NULLS LAST;
 * numbers by value, strings by UTF-16 code units, false before true; arrays element by element,
 * element i in `orders[i]` (or the one order). Values of different types order by type.
 */
export function compareKeys(a: unknown, b: unknown, orders: Order | readonly Order[], depth = 0): number {
  const order = typeof orders === 'string' ? orders : (orders[depth] ?? 'asc');
  const aNull = a === null || a === undefined;
  const bNull = b === null || b === undefined;
  if (aNull || bNull) return aNull && bNull ? 0 : aNull ? 1 : -1;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compareKeys(a[i], b[i], typeof orders === 'string' ? orders : [orders[i] ?? 'asc'], 0);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  const ra = rank(a);
  const rb = rank(b);
  const c = ra !== rb ? ra - rb : (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
  return order === 'desc' ? -c : c;
}

export function checkOrder(order: unknown, what: string): Order | readonly Order[] {
  const ok = (o: unknown): boolean => o === 'asc' || o === 'desc';
  if (ok(order) || (Array.isArray(order) && order.length > 0 && order.every(ok))) return order as Order | Order[];
  throw jobInvalid(`${what}: order must be 'asc', 'desc' or an array of them, got ${JSON.stringify(order)}`);
}

/**
 * Inserts each record of `more` into `best` (sorted by `cmp`, at most `n` long) and drops what
 * falls past `n`. Stable: a record goes after those that compare equal to it, so the result
 * depends only on the order records arrive in, which is fixed per subtask.
 */
export function mergeTopN<T>(best: T[], more: readonly T[], cmp: (a: T, b: T) => number, n: number): void {
  for (const r of more) {
    if (best.length >= n && cmp(r, best[best.length - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(r, best[mid]!) < 0) hi = mid;
      else lo = mid + 1;
    }
    best.splice(lo, 0, r);
    if (best.length > n) best.pop();
  }
}

/**
 * first(n)'s reduce over lists of at most n records, best first: merging two lists keeps the n
 * best (the in-place form merges into the accumulator).
 */
export function topNReducer<T>(
  n: number,
  key: (record: T) => unknown,
  order: Order | readonly Order[],
): { fn: (a: T[], b: T[]) => T[]; inPlace: { init(r: T[]): T[]; add(acc: T[], r: T[]): void } } {
  const cmp = (a: T, b: T): number => compareKeys(key(a), key(b), order);
  return {
    fn: (a, b) => {
      const best = a.slice();
      mergeTopN(best, b, cmp, n);
      return best;
    },
    inPlace: { init: (r) => r.slice(), add: (acc, r) => mergeTopN(acc, r, cmp, n) },
  };
}
