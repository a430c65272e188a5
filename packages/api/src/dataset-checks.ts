import { jobInvalid } from './errors.js';

/** Argument checks and small helpers the DataSet API's files share. */

export function checkFunction(fn: unknown, what: string): void {
  if (typeof fn !== 'function') throw jobInvalid(`${what}: expected a function, got ${typeof fn}`);
}

export function checkName(n: unknown): string {
  if (typeof n !== 'string' || n.trim() === '')
    throw jobInvalid(`name(n): expected a non-empty string, got ${String(n)}`);
  return n;
}

export function identity<T>(r: T): T {
  return r;
}

export function defaultFormat(record: unknown): string {
  return typeof record === 'string' ? record : JSON.stringify(record);
}
