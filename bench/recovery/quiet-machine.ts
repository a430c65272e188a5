import { loadavg } from 'node:os';
import { sleep } from './failover-run.js';

export const load1 = (): number => Math.round(loadavg()[0]! * 100) / 100;

/** Waits (up to `maxWaitMs`) for the 1-minute load to drop below `max`; other sessions share the machine. */
export async function waitForQuietMachine(
  max: number,
  maxWaitMs: number,
  what: string,
): Promise<{ load: number; waitedMs: number }> {
  const t0 = Date.now();
  let said = false;
  while (load1() >= max && Date.now() - t0 < maxWaitMs) {
    if (!said)
      console.log(`  (load ${load1()} >= ${max}: waiting up to ${Math.round(maxWaitMs / 1000)} s before ${what})`);
    said = true;
    await sleep(5_000);
  }
  return { load: load1(), waitedMs: Date.now() - t0 };
}
