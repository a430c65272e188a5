import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { firstLine, moduleInvalid } from './errors.js';
import { isJobDefinition, type JobDefinition } from './job.js';

const FIX = "end it with: export default defineJob('name', (env, args) => { ... })";

/**
 * Imports a job module (the user's .ts entry under tsx, or a bundled .mjs) and returns its job
 * definition. Node caches modules by URL: give each bundle its own path (e.g. by digest).
 */
export async function loadJobModule(fileOrBundlePath: string): Promise<JobDefinition> {
  const file = resolve(fileOrBundlePath);
  const st = await stat(file).catch(() => undefined);
  if (!st?.isFile()) {
    throw moduleInvalid(`job module ${file} does not exist; pass the path of a file that exports a job (${FIX})`);
  }
  let mod: { default?: unknown };
  try {
    mod = (await import(pathToFileURL(file).href)) as { default?: unknown };
  } catch (err) {
    throw moduleInvalid(`job module ${file} failed to load: ${firstLine(err)}`, err);
  }
  if (!isJobDefinition(mod.default)) {
    const what = mod.default === undefined ? 'has no default export' : 'does not export a job by default';
    throw moduleInvalid(`job module ${file} ${what}; ${FIX}`);
  }
  return mod.default;
}
