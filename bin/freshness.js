// Whether packages/cli/dist still matches the sources it was built from (scripts/build.mjs writes
// the list). bin/rebound.js asks on every start, so this has to be cheap: one small JSON file and
// one stat per source file (about 200, a millisecond or two), no hashing and no directory walk. A
// file added to the sources is always imported by one that changed, so the list stays enough.
import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const DIST_DIR = join(ROOT, 'packages', 'cli', 'dist');
/** The entry of a job's user-code worker thread, built beside the CLI (scripts/build.mjs). */
export const USER_CODE_WORKER = join(ROOT, 'packages', 'jobmaster', 'dist', 'user-code-worker.mjs');

/** Undefined when the build is fresh, else why it is not, in a few words. */
export function staleInput() {
  let info;
  try {
    info = JSON.parse(readFileSync(join(DIST_DIR, 'build-info.json'), 'utf8'));
  } catch {
    return 'packages/cli/dist has not been built';
  }
  // Written by the same build as the list, so being there is enough. (Not its mtime: an image
  // layer keeps whole seconds, which made a fresh entry look older than the build's start.)
  try {
    statSync(USER_CODE_WORKER);
  } catch {
    return 'packages/jobmaster/dist has not been built';
  }
  for (const rel of info.inputs) {
    let mtimeMs;
    try {
      mtimeMs = statSync(join(ROOT, rel)).mtimeMs;
    } catch {
      return `${rel} is gone since the build`;
    }
    if (mtimeMs >= info.startedAtMs) return `${rel} changed after the build`;
  }
  return undefined;
}
