import { resolve } from 'node:path';
import { OPTIONS } from '@rebound/core';
import { resolveClusterTarget } from './client.js';
import { renderTable } from './format.js';
import { printJson, printLines, type CliIo } from './io.js';
import type { ConfigOptions } from './options.js';

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

export async function config(opts: ConfigOptions, io: CliIo): Promise<number> {
  const rows = configOptionRows();
  if (opts.json) {
    printJson(io.stdout, rows);
    return 0;
  }
  printLines(io.stdout, [
    ...renderTable(
      ['KEY', 'DEFAULT', 'DESCRIPTION'],
      rows.map((r) => [r.key, r.default, `${r.description}${r.values ? ` (${r.values.join(' | ')})` : ''}${r.testOnly ? ' [test only]' : ''}`]),
    ),
    '',
    'Set values with -D key=value, or in a YAML file given with --config.',
  ]);
  return 0;
}

/** The HA directory of `rebound events`: --ha-dir, else that of the local cluster. */
export async function eventsHaDir(opts: { readonly haDir?: string; readonly cluster?: string }, io: CliIo): Promise<string> {
  if (opts.haDir) return resolve(io.cwd, opts.haDir);
  const target = await resolveClusterTarget({ ...(opts.cluster ? { cluster: opts.cluster } : {}) }, io.cwd);
  return target.kind === 'address' ? '' : target.haDir;
}
