import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

/**
 * vitest global setup of every config whose tests start `bin/rebound.js`: brings packages/cli/dist
 * up to date with the sources first (a no-op when it is), so that `npx vitest run test/x.test.ts`
 * after an edit tests the edit rather than failing on bin/rebound.js's stale-build refusal.
 * The run then keeps that build: a source edited while a long suite runs must not make every
 * later `rebound` of the run refuse to start (REBOUND_DIST_CHECK, inherited by the test workers).
 */
export default function buildDist(): void {
  execFileSync(process.execPath, [resolve(import.meta.dirname, '..', 'scripts', 'build.mjs')], { stdio: 'inherit' });
  process.env.REBOUND_DIST_CHECK = 'off';
}
