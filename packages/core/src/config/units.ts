import { ConfigError } from '../errors.js';
import type { Kind } from './option-spec.js';

const DURATION_UNITS: Record<string, number> = {
  ms: 1,
  milli: 1,
  millis: 1,
  millisecond: 1,
  milliseconds: 1,
  s: 1000,
  sec: 1000,
  secs: 1000,
  second: 1000,
  seconds: 1000,
  m: 60_000,
  min: 60_000,
  mins: 60_000,
  minute: 60_000,
  minutes: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
  hours: 3_600_000,
  d: 86_400_000,
  day: 86_400_000,
  days: 86_400_000,
};

const MEMORY_UNITS: Record<string, number> = {
  b: 1,
  bytes: 1,
  k: 1024,
  kb: 1024,
  kib: 1024,
  kibibytes: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  mib: 1024 ** 2,
  mebibytes: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
  gib: 1024 ** 3,
  gibibytes: 1024 ** 3,
};

/** Parses Flink-style durations: "30 s", "3 min", "500ms", "1h"; a bare number is milliseconds. */
export function parseDuration(text: string, key = 'duration'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m?.[2]?.toLowerCase() ?? '';
  const factor = unit === '' ? 1 : DURATION_UNITS[unit];
  if (!m || factor === undefined) {
    throw new ConfigError(`${key}: '${text}' is not a duration; use e.g. '500 ms', '30 s' or '5 min'`);
  }
  return Math.round(Number(m[1]) * factor);
}

/** Parses Flink-style memory sizes: "1 mb", "16mb", "256 kb"; a bare number is bytes. */
export function parseMemorySize(text: string, key = 'size'): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(text);
  const unit = m?.[2]?.toLowerCase() ?? '';
  const factor = unit === '' ? 1 : MEMORY_UNITS[unit];
  if (!m || factor === undefined) {
    throw new ConfigError(`${key}: '${text}' is not a memory size; use e.g. '1 mb', '256 kb' or '1048576'`);
  }
  return Math.round(Number(m[1]) * factor);
}

/** "30 s", "1 mb", "5": a number in the key's unit as a person reads it (for range errors). */
export function formatInUnit(kind: Kind, n: number): string {
  if (kind === 'duration') {
    for (const [unit, f] of [
      ['d', 86_400_000],
      ['h', 3_600_000],
      ['min', 60_000],
      ['s', 1000],
    ] as const) {
      if (n >= f && n % f === 0) return `${n / f} ${unit}`;
    }
    return `${n} ms`;
  }
  if (kind === 'memory') {
    for (const [unit, f] of [
      ['tb', 1024 ** 4],
      ['gb', 1024 ** 3],
      ['mb', 1024 ** 2],
      ['kb', 1024],
    ] as const) {
      if (n >= f && n % f === 0) return `${n / f} ${unit}`;
    }
    return `${n} b`;
  }
  return String(n);
}
