import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ErrorCode } from '@rebound/core';
import { firstLine, moduleInvalid } from './errors.js';

export interface JobModuleBundle {
  /** A self-contained ES module: only Node built-ins stay imports. */
  readonly code: Uint8Array;
  /** SHA-256 of `code`, hex. */
  readonly digest: string;
}

const CORE_SHIM_NAMESPACE = 'rebound-core-shim';

/**
 * The bundle's stand-in for @rebound/core. The real package drags in gRPC, protobufjs and pino
 * (which need files next to them at run time); bundled user code only needs the error classes.
 * It takes the runtime's classes from the registry that @rebound/api fills (errors.ts) so that
 * errors keep their class and code; the fallback serves a bundle run outside a Rebound process.
 */
function coreShimSource(): string {
  return `
const shared = globalThis[Symbol.for('rebound.api.core')];
class FallbackReboundError extends Error {
  constructor(code, message, options) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}
export const ReboundError = shared ? shared.ReboundError : FallbackReboundError;
export const ErrorCode = shared ? shared.ErrorCode : Object.freeze(${JSON.stringify(ErrorCode)});
`;
}

// ES-module output may still contain CommonJS dependencies that call require(); give them one.
const REQUIRE_BANNER =
  "import { createRequire as __reboundCreateRequire } from 'node:module';\n" +
  'const require = __reboundCreateRequire(import.meta.url);';

interface EsbuildMessage {
  text: string;
  location?: { file: string; line: number; column: number; lineText?: string } | null;
}

/** The package a bare import names: `lodash/fp` is lodash, `@scope/pkg/x` is @scope/pkg. */
export function packageOfSpecifier(spec: string): string | undefined {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || /^[a-zA-Z]:[\\/]/.test(spec))
    return undefined;
  const parts = spec.split('/');
  return spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function describeBuildFailure(err: unknown, entryDir: string): string {
  const errors = (err as { errors?: EsbuildMessage[] }).errors;
  const first = errors?.[0];
  if (!first) return firstLine(err);
  const loc = first.location;
  const where = loc ? `${loc.file}:${loc.line}:${loc.column}: ` : '';
  // The offending line itself, as esbuild shows it, so the error needs no editor to make sense.
  const source = loc?.lineText?.trim() ? ` (line ${loc.line}: ${loc.lineText.trim()})` : '';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more errors)` : '';
  const unresolved = /^Could not resolve "([^"]+)"/.exec(first.text)?.[1];
  const pkg = unresolved === undefined ? undefined : packageOfSpecifier(unresolved);
  const hint = first.text.includes(CORE_SHIM_NAMESPACE)
    ? ' (job modules may import only ReboundError and ErrorCode from @rebound/core)'
    : pkg !== undefined
      ? `; package '${pkg}' is not installed: run 'npm install ${pkg}' in ${entryDir} (or a parent directory)`
      : '';
  return `${where}${first.text}${source}${hint}${more}`;
}

/**
 * This package's own entry points (its package.json exports), e.g. `@rebound/api/testing`. Found
 * by name, not next to this file: in the CLI's compiled bundle this code lives in packages/cli/dist.
 */
function ownEntryPoints(): ReadonlyMap<string, string> {
  let dir = dirname(createRequire(import.meta.url).resolve('@rebound/api'));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  const pkgUrl = pathToFileURL(join(dir, 'package.json'));
  const pkg = JSON.parse(readFileSync(pkgUrl, 'utf8')) as { name: string; exports: Record<string, string> };
  return new Map(
    Object.entries(pkg.exports).map(([sub, file]) => [
      sub === '.' ? pkg.name : `${pkg.name}/${sub.replace(/^\.\//, '')}`,
      fileURLToPath(new URL(file, pkgUrl)),
    ]),
  );
}

const API_SPECIFIER = /^@rebound\/api(\/.*)?$/;
const SKIP_FALLBACK = Symbol('rebound-api-fallback');

/**
 * Bundles a job module (TypeScript or JavaScript) with everything it imports, including its own
 * copy of @rebound/api, into one ES module that the JobMaster and TaskManagers load from disk.
 */
export async function bundleJobModule(entryFile: string): Promise<JobModuleBundle> {
  const entry = resolve(entryFile);
  const st = await stat(entry).catch(() => undefined);
  if (!st?.isFile()) {
    throw moduleInvalid(
      `job module ${entry} does not exist; pass the path of a file that ends with export default defineJob(...)`,
    );
  }
  // Loaded lazily: a bundled job module contains this file too but never bundles anything.
  const esbuild = await import('esbuild');
  let code: Uint8Array;
  try {
    const result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      write: false,
      // Paths in the bundle's comments are relative to this: keeps the digest independent of cwd.
      absWorkingDir: dirname(entry),
      logLevel: 'silent',
      legalComments: 'none',
      keepNames: true,
      external: ['esbuild'],
      banner: { js: REQUIRE_BANNER },
      plugins: [
        {
          // A job outside a project that has @rebound/api installed (a file in ~/jobs, a folder
          // without package.json) gets this copy: the one the CLI and the daemons run. The bundle
          // inlines it, so the JobMaster and TaskManagers never resolve anything themselves.
          name: 'rebound-api-fallback',
          setup(build) {
            build.onResolve({ filter: API_SPECIFIER }, async (args) => {
              if (args.pluginData === SKIP_FALLBACK) return undefined;
              const own = await build.resolve(args.path, {
                kind: args.kind,
                resolveDir: args.resolveDir,
                importer: args.importer,
                pluginData: SKIP_FALLBACK,
              });
              if (own.errors.length === 0) return { path: own.path, ...(own.external ? { external: true } : {}) };
              const path = ownEntryPoints().get(args.path);
              return path === undefined ? undefined : { path };
            });
          },
        },
        {
          name: 'rebound-core-shim',
          setup(build) {
            build.onResolve({ filter: /^@rebound\/core$/ }, () => ({
              path: '@rebound/core',
              namespace: CORE_SHIM_NAMESPACE,
            }));
            build.onLoad({ filter: /.*/, namespace: CORE_SHIM_NAMESPACE }, () => ({
              contents: coreShimSource(),
              loader: 'js',
            }));
          },
        },
      ],
    });
    const out = result.outputFiles?.[0];
    if (!out) throw moduleInvalid('esbuild produced no output');
    code = out.contents;
  } catch (err) {
    throw moduleInvalid(`job module ${entry} failed to bundle: ${describeBuildFailure(err, dirname(entry))}`, err);
  }
  return { code, digest: createHash('sha256').update(code).digest('hex') };
}
