export type Kind = 'duration' | 'memory' | 'int' | 'boolean' | 'string' | 'enum';

export interface OptionSpec<K extends Kind = Kind> {
  readonly kind: K;
  readonly default: string;
  readonly description: string;
  readonly values?: readonly string[];
  /** Test-only options: accepted only when debug.allow-test-options is true. */
  readonly testOnly?: boolean;
  /** Further validation of a string value: the problem, or undefined when it is fine. */
  readonly check?: (value: string) => string | undefined;
}

/** Inclusive bounds of a numeric value, in the key's own unit (ms, bytes or a count). */
export interface Range {
  readonly min: number;
  readonly max: number;
}

/** The keys of an options table whose values are numbers (and so must have a range). */
export type NumericKeyOf<T extends Record<string, OptionSpec>> = {
  [K in keyof T]: T[K]['kind'] extends 'duration' | 'memory' | 'int' ? K : never;
}[keyof T];

/** A range for every numeric key of an options table, and for nothing else. */
export type RangesOf<T extends Record<string, OptionSpec>> = Readonly<Record<NumericKeyOf<T>, Range>>;

/**
 * Node's timers hold at most 2^31-1 ms (about 24.8 days); a longer delay fires after 1 ms. Every
 * duration that drives a timer is bounded below that, so no configured timer can wrap around.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;
export const DAYS_24 = 24 * 86_400_000;
export const PORT = { min: 0, max: 65_535 } as const;
