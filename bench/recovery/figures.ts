/** How the recovery benchmarks print and summarise their figures. */

export const fmt = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(2)} s` : '-');
export const pct = (x: number): string => `${(x * 100).toFixed(1)}%`;

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.floor(s.length / 2)]!;
}
