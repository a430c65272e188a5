import { realpathSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ConfigError, IllegalStateError } from '@rebound/core';
import { printJson, printLines, type CliIo } from './io.js';
import type { InitOptions } from './options.js';
import { REBOUND_BIN } from './local-spawn.js';

// Beside the sources, found from bin/rebound.js: the compiled CLI runs from packages/cli/dist.
const TEMPLATES = pathToFileURL(join(REBOUND_BIN, '..', '..', 'packages', 'cli', 'src', 'init-template') + '/');
const FILES = ['package.json', 'tsconfig.json', 'job.ts', 'job.test.ts', 'README.md'] as const;

/**
 * Where the project's dependencies come from: this installation's own copies, as `file:` links.
 * `npm install --offline` then only makes symlinks (no registry, no network), and every tool
 * (Node, tsx, vitest, esbuild, tsc, an editor) follows a symlink in node_modules to the real
 * package, whose own imports resolve inside this installation. A package this installation lacks
 * (vitest in a production install) falls back to the registry range of the repository.
 */
function dependencySpecs(): { api: string; dev: Record<string, string> } {
  const api = realpathSync(fileURLToPath(new URL('../../api/', import.meta.url)));
  const require = createRequire(REBOUND_BIN);
  const local = (name: string, range: string): string => {
    try {
      return `file:${realpathSync(resolve(require.resolve(`${name}/package.json`), '..'))}`;
    } catch {
      return range;
    }
  };
  // The project's own `npx rebound`: a link to this installation, whose bin is the `rebound` command.
  const cli = `file:${realpathSync(resolve(REBOUND_BIN, '..', '..'))}`;
  return {
    api: `file:${api}`,
    dev: { '@types/node': local('@types/node', '^20'), rebound: cli, vitest: local('vitest', '^4') },
  };
}

/** An npm package name from the directory's name (lower case, no spaces). */
function projectName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '');
  return name || 'rebound-job';
}

async function template(name: string, vars: Record<string, string>): Promise<string> {
  let text = await readFile(new URL(`${name}.txt`, TEMPLATES), 'utf8');
  for (const [k, v] of Object.entries(vars)) text = text.replaceAll(`__${k}__`, v);
  return text;
}

function packageJson(name: string): string {
  const deps = dependencySpecs();
  const pkg = {
    name,
    private: true,
    type: 'module',
    scripts: { test: 'vitest run' },
    dependencies: { '@rebound/api': deps.api },
    devDependencies: deps.dev,
  };
  return `${JSON.stringify(pkg, null, 2)}\n`;
}

/** The compiler options the Rebound sources are written for: the editor checks them too. */
const TSCONFIG = `${JSON.stringify(
  {
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['ES2023'],
      types: ['node'],
      strict: true,
      skipLibCheck: true,
      isolatedModules: true,
      resolveJsonModule: true,
      noEmit: true,
    },
    include: ['*.ts'],
  },
  null,
  2,
)}\n`;

/** `rebound init [dir]`: a job project that runs its test in one process and submits as is. */
export async function init(opts: InitOptions, io: CliIo): Promise<number> {
  const dir = resolve(io.cwd, opts.dir);
  const st = await stat(dir).catch(() => undefined);
  if (st && !st.isDirectory()) throw new ConfigError(`${dir} is a file; give 'rebound init' a directory`);
  const present = [];
  for (const f of FILES) if (await stat(join(dir, f)).catch(() => undefined)) present.push(f);
  if (present.length > 0) {
    throw new IllegalStateError(
      `${dir} already has ${present.join(', ')}; 'rebound init' writes only new files: choose another directory or remove them`,
    );
  }
  const name = projectName(dir);
  const vars = { NAME: name, BIN: REBOUND_BIN };
  const contents: Record<(typeof FILES)[number], string> = {
    'package.json': packageJson(name),
    'tsconfig.json': TSCONFIG,
    'job.ts': await template('job.ts', vars),
    'job.test.ts': await template('job.test.ts', vars),
    'README.md': await template('README.md', vars),
  };
  await mkdir(dir, { recursive: true });
  for (const f of FILES) await writeFile(join(dir, f), contents[f], { flag: 'wx' });
  if (opts.json) {
    printJson(io.stdout, { dir, files: [...FILES] });
    return 0;
  }
  printLines(io.stdout, [
    `created the job project ${name} in ${dir}: ${FILES.join(', ')}`,
    'try it, then submit it (see its README.md):',
    ...(dir === resolve(io.cwd) ? [] : [`  cd ${dir}`]),
    '  npm install --offline',
    '  npm test',
    '  npx rebound local up && npx rebound run job.ts --input <dir of text files> --output <dir>',
  ]);
  return 0;
}
