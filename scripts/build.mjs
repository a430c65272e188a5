// Builds what the `rebound` command and every daemon run: packages/cli/src/main.ts bundled with
// esbuild into packages/cli/dist (ES modules, split into chunks so that each command loads only what
// it needs; third-party packages stay imports from node_modules), and the entry of a job's
// user-code worker thread into packages/jobmaster/dist (one self-contained file). Run by `npm ci`
// (prepare), by `npm test`/`npm run demo` and by the tests' global setup; a build that is still
// fresh is skipped.
//
//   node scripts/build.mjs          build unless fresh
//   node scripts/build.mjs --force  build anyway
//
// Plain JavaScript: it must run before anything else is built, without tsx.
// Why a bundle rather than tsc per package: `rebound --help` measured 0.41 CPU-s bundled against
// 0.52 CPU-s for the same code as one file per module (tsc's layout), and 1.16 CPU-s through tsx,
// on the loaded 2-core machine (farm-bench, median of 10); esbuild is also a runtime dependency
// (job modules are bundled with it), so an `npm ci --omit=dev` image can still build.
import { mkdirSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { DIST_DIR, USER_CODE_WORKER, staleInput } from '../bin/freshness.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ENTRY = join(ROOT, 'packages/cli/src/main.ts');
const PACKAGES = join(ROOT, 'packages') + '/';
const SELF = Symbol('rebound-side-effect-free');
const INFO = join(DIST_DIR, 'build-info.json');
/** Chunks a running daemon may still import lazily are kept this long after a rebuild drops them. */
const KEEP_OLD_CHUNKS_MS = 24 * 3600_000;

// CommonJS dependencies bundled into an ES module (pino) still call require() for built-ins.
const REQUIRE_BANNER =
  "import { createRequire as __reboundCreateRequire } from 'node:module';\n" +
  'const require = __reboundCreateRequire(import.meta.url);';

/**
 * The entry of each job's user-code worker thread (UserCodeWorkers in @rebound/jobmaster): one
 * file with its dependencies inside, so that a JobMaster starts a job's worker without bundling
 * anything (it never loads esbuild) and the worker resolves nothing from node_modules. Of
 * @rebound/core it takes only the error classes: the rest drags in gRPC and protobufjs, which a
 * worker does not need.
 */
function buildUserCodeWorker() {
  const coreErrors = join(PACKAGES, 'core/src/errors.ts');
  return build({
    entryPoints: [join(PACKAGES, 'jobmaster/src/user-code/user-code-worker-entry.ts')],
    outfile: USER_CODE_WORKER,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    metafile: true,
    logLevel: 'warning',
    legalComments: 'none',
    keepNames: true,
    // @rebound/api loads it only to bundle job modules, which a worker never does.
    external: ['esbuild'],
    banner: { js: REQUIRE_BANNER },
    plugins: [
      {
        name: 'rebound-core-errors',
        setup(b) {
          b.onResolve({ filter: /^@rebound\/core$/ }, () => ({ path: coreErrors }));
        },
      },
    ],
  });
}

function writeAtomic(file, data) {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

async function main() {
  const force = process.argv.includes('--force');
  if (!force) {
    if (staleInput() === undefined) return;
  }
  const startedAtMs = Date.now();
  const worker = buildUserCodeWorker();
  const result = await build({
    entryPoints: [ENTRY],
    outdir: DIST_DIR,
    entryNames: '[name]',
    chunkNames: '[name]-[hash]',
    bundle: true,
    splitting: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    sourcemap: 'linked',
    metafile: true,
    write: false,
    logLevel: 'warning',
    plugins: [
      {
        // Our workspace packages are bundled from their sources; everything else is a dependency
        // that node loads from node_modules, exactly as it did under tsx.
        name: 'rebound-externals',
        setup(b) {
          b.onResolve({ filter: /^[^./]/ }, (a) =>
            a.path.startsWith('@rebound/') ? undefined : { path: a.path, external: true },
          );
        },
      },
      {
        // Our sources import nothing for its side effects alone (no `import './x.js'`), so a module
        // none of whose exports a chunk uses can stay out of it: `import { Configuration } from
        // '@rebound/core'` then brings config.ts, not the whole barrel (gRPC, protobufjs, pino).
        name: 'rebound-side-effect-free',
        setup(b) {
          b.onResolve({ filter: /.*/ }, async (a) => {
            if (a.pluginData === SELF || a.kind === 'entry-point') return undefined;
            if (!a.path.startsWith('@rebound/') && !a.path.startsWith('.')) return undefined;
            const r = await b.resolve(a.path, {
              kind: a.kind,
              importer: a.importer,
              resolveDir: a.resolveDir,
              pluginData: SELF,
            });
            if (r.errors.length > 0 || r.external || !r.path.startsWith(PACKAGES))
              return r.errors.length > 0 ? { errors: r.errors } : undefined;
            return { ...r, sideEffects: false };
          });
        },
      },
    ],
  });
  mkdirSync(DIST_DIR, { recursive: true });
  // The worker entry before the CLI's: a JobMaster of the new build finds the new worker.
  const workerResult = await worker;
  mkdirSync(dirname(USER_CODE_WORKER), { recursive: true });
  writeAtomic(USER_CODE_WORKER, workerResult.outputFiles[0].contents);
  // Chunks first, the entry last, each file renamed into place: a process that starts during a
  // rebuild sees the old build or the new one, and a running daemon's lazy imports keep resolving
  // (a chunk's name is its content's hash).
  const written = new Set();
  const outputs = [...result.outputFiles].sort(
    (a, b) => Number(a.path.endsWith('main.js')) - Number(b.path.endsWith('main.js')),
  );
  for (const f of outputs) {
    writeAtomic(f.path, f.contents);
    written.add(f.path);
  }
  const inputs = [
    ...new Set(
      // package-lock.json: the worker entry holds its dependencies, so a new version rebuilds it.
      [
        'scripts/build.mjs',
        'package-lock.json',
        ...Object.keys(result.metafile.inputs),
        ...Object.keys(workerResult.metafile.inputs),
      ]
        .filter((p) => !p.includes('node_modules/'))
        .map((p) => relative(ROOT, resolve(ROOT, p))),
    ),
  ];
  writeAtomic(INFO, JSON.stringify({ startedAtMs, inputs }, null, 1) + '\n');
  written.add(INFO);
  for (const name of readdirSync(DIST_DIR)) {
    const file = join(DIST_DIR, name);
    if (written.has(file)) continue;
    try {
      if (Date.now() - statSync(file).mtimeMs > KEEP_OLD_CHUNKS_MS) unlinkSync(file);
    } catch {
      // Removed by a concurrent build.
    }
  }
  console.log(
    `rebound: built ${relative(ROOT, DIST_DIR)} (${inputs.length} sources, ${written.size - 1} files) in ${Date.now() - startedAtMs} ms`,
  );
}

await main();
