import { resolve } from 'node:path';
import { OPTIONS } from '@rebound/core';
import { haServicesOf, resolveClusterTarget, type ClusterTarget } from './cluster-target.js';
import { readClusterFile } from './cluster-file.js';
import { renderTable } from './format.js';
import { printJson, printLines, type CliIo } from './io.js';
import type { ConfigOptions } from './options.js';
import type { StoredJobSummary } from '@rebound/ha';

interface OptionRow {
  readonly key: string;
  readonly kind: string;
  readonly default: string;
  readonly description: string;
  readonly values?: readonly string[];
  readonly testOnly?: boolean;
}

export function configOptionRows(): OptionRow[] {
  return Object.entries(OPTIONS as Record<string, Omit<OptionRow, 'key'>>)
    .map(([key, spec]) => ({ key, ...spec }))
    .sort((a, b) => a.key.localeCompare(b.key));
}

/** A value as people read it: durations and sizes always with their unit ("30000" → "30000 ms"). */
export function withUnit(kind: string, value: string): string {
  if (!/^\s*\d+\s*$/.test(value)) return value;
  if (kind === 'duration') return `${value.trim()} ms`;
  if (kind === 'memory') return `${value.trim()} bytes`;
  return value;
}

/** debug.* keys are crash points and switches for tests: listed only with --all (or when a cluster sets them). */
const DEBUG_PREFIX = 'debug.';

export async function config(opts: ConfigOptions, io: CliIo): Promise<number> {
  const all = configOptionRows();
  const hidden = opts.all === true ? 0 : all.filter((r) => r.key.startsWith(DEBUG_PREFIX)).length;
  const rows = opts.all === true ? all : all.filter((r) => !r.key.startsWith(DEBUG_PREFIX));
  const hiddenLine =
    hidden > 0 ? [`${hidden} debug.* keys (crash points for tests) are not shown; --all lists them.`] : [];
  if (opts.cluster !== undefined) return clusterConfig(all, rows, opts.cluster, opts.json, io, hiddenLine);
  if (opts.json) {
    printJson(io.stdout, rows);
    return 0;
  }
  printLines(io.stdout, [
    ...renderTable(
      ['KEY', 'DEFAULT', 'DESCRIPTION'],
      rows.map((r) => [
        r.key,
        withUnit(r.kind, r.default),
        `${r.description}${r.values ? ` (${r.values.join(' | ')})` : ''}${r.testOnly ? ' [test only]' : ''}`,
      ]),
    ),
    '',
    'Set values with -D key=value, or in a YAML file given with --config. `rebound config --cluster` shows what a local cluster runs with.',
    ...hiddenLine,
  ]);
  return 0;
}

/**
 * `config --cluster`: the values the daemons of a local cluster were started with (cluster.json
 * keeps the YAML file and -D values of `local up`), over the defaults.
 */
async function clusterConfig(
  all: readonly OptionRow[],
  shown: readonly OptionRow[],
  workdir: string,
  json: boolean,
  io: CliIo,
  hiddenLine: readonly string[],
): Promise<number> {
  const dir = resolve(io.cwd, workdir);
  const file = await readClusterFile(dir, []);
  const set = file.config;
  const listed = new Set(shown.map((r) => r.key));
  const inForce = all
    .filter((r) => listed.has(r.key) || set[r.key] !== undefined)
    .map((r) => ({
      key: r.key,
      value: withUnit(r.kind, set[r.key] ?? r.default),
      source: set[r.key] !== undefined ? 'cluster' : 'default',
      default: withUnit(r.kind, r.default),
    }));
  if (json) {
    printJson(io.stdout, { workdir: dir, config: inForce });
    return 0;
  }
  printLines(io.stdout, [
    `Configuration of the local cluster in ${dir} (every JobMaster and TaskManager; a job's own -D values apply on top for that job)`,
    '',
    ...renderTable(
      ['KEY', 'VALUE', 'SET BY'],
      inForce.map((r) => [r.key, r.value, r.source === 'cluster' ? `cluster (default ${r.default})` : 'default']),
    ),
    ...(hiddenLine.length > 0 ? ['', ...hiddenLine] : []),
  ]);
  return 0;
}

/**
 * Where `rebound events` reads job event logs: the `high-availability.storageDir` of --ha-dir (as
 * `$REBOUND_PROPERTIES` configures it) or of the local cluster; the HA directory unless configured
 * otherwise.
 */
export async function eventsHaDir(
  opts: { readonly haDir?: string; readonly cluster?: string },
  io: CliIo,
): Promise<{ readonly storageDir: string; jobs(): Promise<StoredJobSummary[]> }> {
  const target: ClusterTarget = opts.haDir
    ? { kind: 'ha', haDir: resolve(io.cwd, opts.haDir) }
    : await resolveClusterTarget({ ...(opts.cluster ? { cluster: opts.cluster } : {}) }, io.cwd);
  if (target.kind === 'address') return { storageDir: '', jobs: async () => [] };
  return {
    storageDir: haServicesOf(target).storageDir,
    // Names and states come from the job store (etcd keeps the graphs there).
    jobs: async () => {
      const ha = haServicesOf(target);
      try {
        return await ha.jobGraphStore().listJobs();
      } finally {
        await ha.close();
      }
    },
  };
}
