import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JobDefinition, JobModuleBundle } from '@rebound/api';

/** A job module as the client sees it: the bundle it submits, and the job that bundle defines. */
export interface LoadedJobModule {
  readonly definition: JobDefinition;
  readonly bundle: JobModuleBundle;
}

/**
 * Bundles the job file and loads the bundle, not the file itself: the client then plans exactly
 * the code the JobMaster and TaskManagers will run, and a job outside any package (no
 * package.json, no node_modules) loads the same way as the examples. Importing the .ts source
 * directly would leave its imports to Node's resolution from the job's folder.
 */
export async function loadJobForClient(jobFilePath: string): Promise<LoadedJobModule> {
  const api = await import('@rebound/api');
  const bundle = await api.bundleJobModule(jobFilePath);
  const dir = await mkdtemp(join(tmpdir(), 'rebound-job-'));
  try {
    // Named by digest: Node caches modules by URL, and the same code may be loaded twice.
    const file = join(dir, `${bundle.digest}.mjs`);
    await writeFile(file, bundle.code);
    return { definition: await api.loadJobModule(file), bundle };
  } finally {
    // The module is evaluated once imported; a bundle imports nothing but Node built-ins later.
    await rm(dir, { recursive: true, force: true });
  }
}
