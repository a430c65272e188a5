import { InvalidArgumentError } from 'commander';
import { Configuration, parseDuration } from '@rebound/core';
import { propertiesFromEnv } from './env-properties.js';

/** Commander reducer for options given several times (`-D a=1 -D b=2`). */
export function collect(value: string, previous: readonly string[] = []): string[] {
  return [...previous, value];
}

/**
 * Parses and validates `-D key=value` arguments. Unknown keys and malformed values fail here, with
 * the key named, before anything is started or submitted.
 */
export function parseDynamicProperties(raw: readonly string[]): Record<string, string> {
  const record = Configuration.parseDynamicProperties(raw);
  Configuration.of(record);
  return record;
}

/** The configuration of a process: defaults, then the YAML file, then `$REBOUND_PROPERTIES`, then `-D` overrides. */
export function buildConfiguration(
  opts: { readonly configFile?: string; readonly dynamic: readonly string[] },
  env: Readonly<Record<string, string | undefined>> = process.env,
): Configuration {
  const overrides = Configuration.parseDynamicProperties(opts.dynamic);
  const base = opts.configFile ? Configuration.fromYamlFile(opts.configFile) : Configuration.empty();
  return base.with(propertiesFromEnv(env)).with(overrides);
}

export function parsePositiveInt(value: string): number {
  if (!/^\s*\d+\s*$/.test(value) || Number(value) < 1 || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`'${value}' is not a positive integer.`);
  }
  return Number(value);
}

/**
 * `logs --job`: the log files carry job ids only, so a job's name would match no line and print
 * nothing; refuse it and say what to give instead.
 */
export function parseJobIdPrefix(value: string): string {
  if (!/^[0-9a-f]{4,32}$/i.test(value)) {
    throw new InvalidArgumentError(
      `'${value}' is not a job id or a prefix of one (4 to 32 hex characters); logs match ids, not names: 'rebound list' shows them.`,
    );
  }
  return value;
}

export function parseNonNegativeInt(value: string): number {
  if (!/^\s*\d+\s*$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError(`'${value}' is not a non-negative integer.`);
  }
  return Number(value);
}

/** Durations on the command line use the same syntax as configuration values ("30 s", "500ms"). */
export function parseDurationArg(value: string): number {
  try {
    return parseDuration(value);
  } catch {
    throw new InvalidArgumentError(`'${value}' is not a duration; use e.g. '500 ms', '30 s' or '5 min'.`);
  }
}
