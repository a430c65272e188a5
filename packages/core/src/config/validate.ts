import { ConfigError } from '../errors.js';
import type { Kind, OptionSpec } from './option-spec.js';
import { OPTIONS, RANGES } from './options.js';
import { formatInUnit, parseDuration, parseMemorySize } from './units.js';

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** The candidate a misspelt word most likely meant (typos, not guesses: at most a third differs). */
export function closestMatch(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(word.length / 3)) + 1;
  for (const known of candidates) {
    const d = editDistance(word, known);
    if (d < bestDistance) [best, bestDistance] = [known, d];
  }
  return best;
}

function checkRange(key: string, kind: Kind, value: string, n: number): void {
  const range = (RANGES as Record<string, { min: number; max: number } | undefined>)[key];
  if (!range || (n >= range.min && n <= range.max)) return;
  throw new ConfigError(
    `${key}: '${value}' is out of range; use a value from ${formatInUnit(kind, range.min)} to ${formatInUnit(kind, range.max)}`,
  );
}

export function validate(key: string, value: string, allowTestOptions: boolean): void {
  const spec = (OPTIONS as Record<string, OptionSpec>)[key];
  if (!spec) {
    const near = closestMatch(key, Object.keys(OPTIONS));
    throw new ConfigError(
      `unknown configuration key '${key}'${near ? ` (did you mean '${near}'?)` : ''}; see 'rebound config' for the known keys`,
    );
  }
  if (spec.testOnly && !allowTestOptions) {
    throw new ConfigError(`'${key}' is a test-only option; set debug.allow-test-options=true to use it`);
  }
  switch (spec.kind) {
    case 'duration':
      checkRange(key, spec.kind, value, parseDuration(value, key));
      return;
    case 'memory':
      checkRange(key, spec.kind, value, parseMemorySize(value, key));
      return;
    case 'int': {
      if (!/^-?\d+$/.test(value.trim())) throw new ConfigError(`${key}: '${value}' is not an integer`);
      checkRange(key, spec.kind, value, Number.parseInt(value, 10));
      return;
    }
    case 'boolean':
      if (!/^(true|false)$/i.test(value.trim())) throw new ConfigError(`${key}: '${value}' is not true or false`);
      return;
    case 'enum':
      if (!spec.values?.includes(value.trim())) {
        throw new ConfigError(`${key}: '${value}' is not one of ${spec.values?.join(', ')}`);
      }
      return;
    case 'string': {
      const problem = value.trim() === '' ? undefined : spec.check?.(value);
      if (problem) throw new ConfigError(`${key}: ${problem}`);
      return;
    }
  }
}
