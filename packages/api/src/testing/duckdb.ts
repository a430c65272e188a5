import { DuckDBInstance } from '@duckdb/node-api';

/**
 * The independent oracle of the API and example tests: the same query in DuckDB's SQL over the
 * same files. Rows come back as plain objects, BIGINT and HUGEINT as numbers (tests stay far
 * below 2^53), DECIMAL as numbers too.
 */
export async function duckdbQuery(sql: string): Promise<{ [column: string]: unknown }[]> {
  const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
  try {
    const conn = await instance.connect();
    try {
      const reader = await conn.runAndReadAll(sql);
      return reader.getRowObjectsJS().map((row) => {
        const out: { [column: string]: unknown } = {};
        for (const [k, v] of Object.entries(row)) out[k] = normalize(v);
        return out;
      });
    } finally {
      conn.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

function normalize(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v !== null && typeof v === 'object' && 'toDouble' in v && typeof v.toDouble === 'function') {
    return (v as { toDouble(): number }).toDouble();
  }
  return v;
}

/** SQL string literal. */
export function sqlString(s: string): string {
  return `'${s.replaceAll("'", "''")}'`;
}
