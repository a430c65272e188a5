import { parseArgs } from 'node:util';
import { ErrorCode, ReboundError } from '@rebound/core';

/**
 * A job argument that is missing, unknown or malformed. Thrown while the job builds, it surfaces
 * as "job '<name>' failed to build: <message>". Only ReboundError and ErrorCode: in a job module
 * bundle, @rebound/core is a shim that has nothing else.
 */
export class JobArgumentError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.CONFIG_INVALID, message);
  }
}

/**
 * Argument parsing shared by the examples: `--name value` options, all strings, unknown options
 * rejected. Errors thrown here surface as "job '<name>' failed to build: <message>".
 */
export function parseOptions<const N extends string>(
  args: string[],
  usage: string,
  names: readonly N[],
): { [K in N]?: string } {
  const options = Object.fromEntries(names.map((n) => [n, { type: 'string' as const }]));
  try {
    const { values } = parseArgs({ args, options, strict: true, allowPositionals: false });
    return values as { [K in N]?: string };
  } catch (err) {
    throw new JobArgumentError(`${(err as Error).message}; usage: ${usage}`);
  }
}

export function required(value: string | undefined, name: string, usage: string): string {
  if (value === undefined || value === '') throw new JobArgumentError(`missing --${name}; usage: ${usage}`);
  return value;
}

export function intOption(value: string | undefined, name: string, fallback: number, min = 0): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min)
    throw new JobArgumentError(`--${name} must be an integer >= ${min}, got '${value}'`);
  return n;
}
