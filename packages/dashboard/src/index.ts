import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

/** The dashboard as the JobMaster serves it: one HTML page and one script, no CDN. */
export interface DashboardAssets {
  readonly html: string;
  readonly js: string;
}

// Found through the package, not this file: in the CLI's bundle (packages/cli/dist) this code no
// longer sits next to app/.
const APP_DIR = join(dirname(createRequire(import.meta.url).resolve('@rebound/dashboard')), '..', 'app') + '/';

/**
 * Bundles the browser code (preact + dagre, from node_modules) with esbuild into one minified
 * script. Done once per process, on first request: a JobMaster that nobody looks at pays nothing.
 */
export async function buildDashboard(): Promise<DashboardAssets> {
  const result = await build({
    entryPoints: [`${APP_DIR}main.tsx`],
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2020',
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    write: false,
    logLevel: 'silent',
    legalComments: 'none',
  });
  const js = result.outputFiles[0]?.text ?? '';
  const html = await readFile(`${APP_DIR}index.html`, 'utf8');
  return { html, js };
}

let cached: Promise<DashboardAssets> | undefined;

/** The bundle of this process (built on first use; a failed build is retried next time). */
export function dashboardAssets(): Promise<DashboardAssets> {
  if (!cached) {
    cached = buildDashboard();
    cached.catch(() => (cached = undefined));
  }
  return cached;
}
