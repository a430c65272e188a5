/**
 * The data of test/operator-kills.test.ts and the oracles it checks the jobs against: plain
 * TypeScript over the same rows, sharing no code with the operators under test.
 */
export interface Order {
  o: number;
  c: number;
  v: number;
  name: string;
}
export interface Customer {
  c: number;
  region: string;
}

/** A small deterministic generator (the inputs must be the same in every run). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** Orders o = first..first+n-1: customers 1..40 (not every one exists), names CSV must quote. */
export function makeOrders(first: number, n: number, seed: number): Order[] {
  const rnd = lcg(seed);
  return Array.from({ length: n }, (_, i) => {
    const o = first + i;
    const name = o % 5 === 0 ? `a,b "${o}"` : o % 7 === 0 ? `über ${o}` : `order ${o}`;
    return { o, c: 1 + Math.floor(rnd() * 40), v: Math.floor(rnd() * 1000), name };
  });
}

/** Customers 1..45 but every 7th: orders of c = 7, 14, … match none, customers 41..45 no order. */
export const CUSTOMERS: Customer[] = Array.from({ length: 45 }, (_, i) => ({
  c: i + 1,
  region: `r${(i + 1) % 4}`,
})).filter((c) => c.c % 7 !== 0);

export const jsonLines = (rows: readonly unknown[]): string => rows.map((r) => `${JSON.stringify(r)}\n`).join('');

/** A JSON value with object keys sorted, so rows compare as sorted strings. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const o = v as { [k: string]: unknown };
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
export const sortedCanonical = (rows: readonly unknown[]): string[] => rows.map(canonical).sort();

export function csvOracleField(v: string | number): string {
  const s = String(v);
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The oracle of orders grouped by c: {c, n: count, total: sum of v}. */
export function groupsOf(orders: readonly Order[]): Map<number, { c: number; n: number; total: number }> {
  const groups = new Map<number, { c: number; n: number; total: number }>();
  for (const r of orders) {
    const g = groups.get(r.c) ?? { c: r.c, n: 0, total: 0 };
    g.n += 1;
    g.total += r.v;
    groups.set(r.c, g);
  }
  return groups;
}

/** The oracle's join rows: {o, c, region}, null for the side without a match. */
export function joinRows(orders: readonly Order[], customers: readonly Customer[], type: 'left' | 'right' | 'full') {
  const rows: { o: number | null; c: number | null; region: string | null }[] = [];
  if (type !== 'right') {
    for (const o of orders) {
      const m = customers.filter((c) => c.c === o.c);
      if (m.length === 0) rows.push({ o: o.o, c: null, region: null });
      for (const c of m) rows.push({ o: o.o, c: c.c, region: c.region });
    }
  }
  for (const c of type === 'left' ? [] : customers) {
    const m = orders.filter((o) => o.c === c.c);
    if (m.length === 0) rows.push({ o: null, c: c.c, region: c.region });
    else if (type === 'right') for (const o of m) rows.push({ o: o.o, c: c.c, region: c.region });
  }
  return rows;
}
