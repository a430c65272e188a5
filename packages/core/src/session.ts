import { randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * A TaskManager's session secret: 128 random bits, made once per TaskManager process. It is bound
 * to the TaskManager's id when it registers with a leader, and every later call between the two
 * carries it (see docs/architecture/security.md). The cluster secret says "a member of the cluster";
 * this says "the TaskManager that registered under this id".
 */
export function newSessionSecret(): string {
  return randomBytes(16).toString('base64url');
}

/** A per-job random capability to read the job's partitions (the same 128 bits of randomness). */
export function newReadCapability(): string {
  return randomBytes(16).toString('base64url');
}

/** Compares two secrets in time independent of where they differ; an empty secret never matches. */
export function sameSecret(expected: string, given: string): boolean {
  if (expected.length === 0 || given.length === 0) return false;
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}
