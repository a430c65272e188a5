import { createHash } from 'node:crypto';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
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
  location?: { file: string; line: number; column: number } | null;
}

function describeBuildFailure(err: unknown): string {
  const errors = (err as { errors?: EsbuildMessage[] }).errors;
  const first = errors?.[0];
  if (!first) return firstLine(err);
  const where = first.location ? `${first.location.file}:${first.location.line}:${first.location.column}: ` : '';
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more errors)` : '';
  const hint = first.text.includes(CORE_SHIM_NAMESPACE) ? ' (job modules may import only ReboundError and ErrorCode from @rebound/core)' : '';
  return `${where}${first.text}${hint}${more}`;
}

/**
 * Bundles a job module (TypeScript or JavaScript) with everything it imports, including its own
 * copy of @rebound/api, into one ES module that the JobMaster and TaskManagers load from disk.
 */
export async function bundleJobModule(entryFile: string): Promise<JobModuleBundle> {
  const entry = resolve(entryFile);
  const st = await stat(entry).catch(() => undefined);
  if (!st?.isFile()) {
    throw moduleInvalid(`job module ${entry} does not exist; pass the path of a file that ends with export default defineJob(...)`);
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
          name: 'rebound-core-shim',
          setup(build) {
            build.onResolve({ filter: /^@rebound\/core$/ }, () => ({ path: '@rebound/core', namespace: CORE_SHIM_NAMESPACE }));
            build.onLoad({ filter: /.*/, namespace: CORE_SHIM_NAMESPACE }, () => ({ contents: coreShimSource(), loader: 'js' }));
          },
        },
      ],
    });
    const out = result.outputFiles?.[0];
    if (!out) throw new Error('esbuild produced no output');
    code = out.contents;
  } catch (err) {
    throw moduleInvalid(`job module ${entry} failed to bundle: ${describeBuildFailure(err)}`, err);
  }
  return { code, digest: createHash('sha256').update(code).digest('hex') };
}
