import { customer, order, type Customer } from '@rebound/example-support';

/**
 * The join job's output over the generated rows, written from the query's definition and sharing
 * no code with the job (`ordersWithCustomers` in examples/join.ts, which
 * scripts/chaos-jobs/join.ts runs): a bug in the job's join or formatting must not be in the
 * expectation too. Only the row generators `order` and `customer` are shared: they are the input,
 * not the computation.
 *
 *   SELECT o.orderkey, c.custkey, c.name, c.nation, o.totalprice
 *   FROM orders o JOIN customer c ON o.custkey = c.custkey
 *
 * One line per matching pair, tab-separated, totalprice (integer cents) as units with two decimals.
 */
export function expectedJoinLines(orders: number, customers: number, seed: number): string[] {
  const byKey = new Map<number, Customer[]>();
  for (let i = 0; i < customers; i++) {
    const c = customer(seed, i);
    byKey.set(c.custkey, [...(byKey.get(c.custkey) ?? []), c]);
  }
  const lines: string[] = [];
  for (let i = 0; i < orders; i++) {
    const o = order(seed, i, customers);
    const price = BigInt(o.totalprice);
    const units = `${price / 100n}.${String(price % 100n).padStart(2, '0')}`;
    for (const c of byKey.get(o.custkey) ?? [])
      lines.push(`${o.orderkey}\t${c.custkey}\t${c.name}\t${c.nation}\t${units}`);
  }
  return lines.sort();
}
