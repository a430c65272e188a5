/**
 * Package boundaries, checked by `npm run check:deps` (dependency-cruiser) in .ci/run.
 *
 * - no import cycles, anywhere;
 * - across packages only `@rebound/<pkg>` and only what its package.json `exports` names
 *   (no relative paths into another package, no deep imports into its src/); bench/, scripts/,
 *   test/ and examples/ likewise; packages never import from bench/, scripts/, test/, examples/;
 * - a package imports only the workspace packages its package.json declares, and only those
 *   its layer allows (LAYERS below, as in ARCHITECTURE.md: cli -> jobmaster/taskmanager/shuffle-worker ->
 *   event-store/ha/api -> core; the JobMaster and the TaskManager never import each other);
 * - a package's non-test code uses only third-party packages its package.json declares;
 * - every import resolves.
 * A new package must be added to LAYERS: the check refuses to run without it.
 */
const fs = require('node:fs');
const path = require('node:path');

/** Workspace packages (by directory under packages/) each package may import. */
const LAYERS = {
  core: [],
  // @rebound/core/hash (the shared mixer) and ReboundError: what job module bundles can take in.
  'example-support': ['core'],
  api: ['core'],
  ha: ['core'],
  'event-store': ['core'],
  // The dashboard is browser code the JobMaster bundles and serves; it imports no package.
  dashboard: [],
  jobmaster: ['core', 'api', 'ha', 'event-store', 'dashboard'],
  // Blocking result partitions on disk and over the network: TaskManagers and shuffle workers.
  partition: ['core'],
  taskmanager: ['core', 'api', 'ha', 'partition'],
  // The remote shuffle service's daemon: keeps partitions outside TaskManagers.
  'shuffle-worker': ['core', 'ha', 'partition'],
  cli: ['core', 'api', 'ha', 'event-store', 'jobmaster', 'taskmanager', 'shuffle-worker'],
  // The chaos harness drives clusters through the CLI and reads HA files and event logs.
  chaos: ['core', 'api', 'ha', 'event-store', 'cli', 'example-support'],
};

const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const PACKAGES_DIR = path.join(__dirname, 'packages');

const packages = fs
  .readdirSync(PACKAGES_DIR)
  .filter((dir) => fs.existsSync(path.join(PACKAGES_DIR, dir, 'package.json')))
  .map((dir) => {
    const manifest = JSON.parse(fs.readFileSync(path.join(PACKAGES_DIR, dir, 'package.json'), 'utf8'));
    const exportTargets = [];
    const collect = (v) => {
      if (typeof v === 'string') exportTargets.push(v);
      else if (v && typeof v === 'object') Object.values(v).forEach(collect);
    };
    collect(manifest.exports);
    const declared = Object.keys(manifest.dependencies ?? {});
    return {
      dir,
      workspaceDeps: declared.filter((n) => n.startsWith('@rebound/')).map((n) => n.slice('@rebound/'.length)),
      thirdPartyDeps: declared.filter((n) => !n.startsWith('@rebound/')),
      entries: exportTargets.map((t) => path.posix.join('packages', dir, t)),
    };
  });

const unplaced = packages.filter((p) => !(p.dir in LAYERS)).map((p) => p.dir);
if (unplaced.length > 0) {
  throw new Error(
    `.dependency-cruiser.cjs: add packages/${unplaced.join(', packages/')} to LAYERS (which packages it may import)`,
  );
}

const oneOf = (dirs) => `^packages/(${dirs.map(escapeRegExp).join('|')})/`;
const publicEntries = packages.flatMap((p) => p.entries).map((e) => `^${escapeRegExp(e)}$`);

const forbidden = [
  {
    name: 'no-circular',
    comment: 'Import cycles make load order matter and hide which module owns what.',
    severity: 'error',
    from: {},
    to: { circular: true },
  },
  {
    name: 'no-relative-import-into-another-package',
    comment: 'Import another package by its name (@rebound/<pkg>), not by a relative path into its files.',
    severity: 'error',
    from: { path: '^packages/([^/]+)/' },
    to: { path: '^packages/', pathNot: '^packages/$1/', dependencyTypesNot: ['aliased-workspace'] },
  },
  {
    name: 'root-code-imports-packages-by-name',
    comment: 'bench/, scripts/, test/ and examples/ import packages as @rebound/<pkg>, not by relative paths.',
    severity: 'error',
    from: { path: '^(bench|scripts|test|examples)/' },
    to: { path: '^packages/', dependencyTypesNot: ['aliased-workspace'] },
  },
  {
    name: 'only-public-exports',
    comment:
      'Outside a package, only the files its package.json `exports` names may be imported (no deep imports into src/).',
    severity: 'error',
    from: { path: '^(packages/[^/]+|bench|scripts|test|examples)/' },
    to: { path: '^packages/[^/]+/', pathNot: ['^$1/', ...publicEntries] },
  },
  {
    name: 'packages-stay-inside-packages',
    comment: 'A package must not import from bench/, scripts/, test/ or examples/: move what it needs into a package.',
    severity: 'error',
    from: { path: '^packages/' },
    to: { path: '^(bench|scripts|test|examples)/' },
  },
  ...packages.map((p) => ({
    name: `undeclared-workspace-dependency-${p.dir}`,
    comment: `packages/${p.dir} imports a workspace package its package.json does not declare in "dependencies".`,
    severity: 'error',
    from: { path: `^packages/${escapeRegExp(p.dir)}/` },
    to: { dependencyTypes: ['aliased-workspace'], path: '^packages/', pathNot: oneOf([p.dir, ...p.workspaceDeps]) },
  })),
  ...packages.map((p) => ({
    name: `layering-${p.dir}`,
    comment: `packages/${p.dir} may import only ${LAYERS[p.dir].join(', ') || 'no other package'} (LAYERS in .dependency-cruiser.cjs).`,
    severity: 'error',
    from: { path: `^packages/${escapeRegExp(p.dir)}/` },
    to: { path: '^packages/', pathNot: oneOf([p.dir, ...LAYERS[p.dir]]) },
  })),
  ...packages.map((p) => ({
    name: `undeclared-third-party-dependency-${p.dir}`,
    comment: `packages/${p.dir} uses a third-party package its package.json does not declare in "dependencies" (tests may use the root's devDependencies).`,
    severity: 'error',
    from: { path: `^packages/${escapeRegExp(p.dir)}/`, pathNot: ['\\.test\\.ts$', '/src/testing/'] },
    to: {
      path: '(^|/)node_modules/',
      pathNot: `(^|/)node_modules/(${p.thirdPartyDeps.map(escapeRegExp).join('|')})/`,
    },
  })),
  {
    name: 'not-to-unresolvable',
    comment: 'An import that does not resolve (also: a subpath a package does not export).',
    severity: 'error',
    from: {},
    to: { couldNotResolve: true },
  },
];

module.exports = {
  forbidden,
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    // Merges the root manifest in, so that imports of workspace packages are typed aliased-workspace;
    // what each package declares is checked by the rules above, from its own package.json.
    combinedDependencies: true,
    doNotFollow: { path: ['node_modules', '^packages/core/src/generated/'] },
    // packages/*/dist: the build (scripts/build.mjs) bundles the sources checked here.
    exclude: { path: ['^packages/core/src/generated/', '^packages/[^/]+/dist/'] },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.js', '.jsx', '.mjs', '.cjs', '.json', '.d.ts'],
    },
    progress: { type: 'none' },
  },
};
