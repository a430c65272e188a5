import { Command, Option } from 'commander';
import { collect, parseDurationArg } from '../args.js';
import { HA_DIR_ENV } from '../names.js';
import { DEFAULT_WORKDIR } from '../names.js';
import { UsageError } from '../errors.js';
import { formatDurationMs } from '../format.js';
import type { CommandHandlers } from '../options.js';

/** What every group of commands is registered with: the handlers, and how an action reports its exit code. */
export interface CommandContext {
  readonly handlers: CommandHandlers;
  readonly run: (p: Promise<number>) => Promise<void>;
}

export const D_HELP = 'configuration override, repeatable (see `rebound config` for the keys)';

export function withDynamic(cmd: Command): Command {
  return cmd.option('-D, --define <key=value>', D_HELP, collect, []);
}

export function withClusterTarget(cmd: Command): Command {
  return (
    cmd
      .option(
        '--cluster <workdir>',
        `local cluster directory whose cluster.json names the HA directory (default: $${HA_DIR_ENV} if set, else ./${DEFAULT_WORKDIR})`,
      )
      .option('--ha-dir <dir>', 'HA directory: the leader is found through its leader.json')
      .option('--address <host:port>', 'talk to this JobMaster directly (no leader re-resolution)')
      .option('-m, --jobmanager <host:port>', 'the same as --address (as flink run -m)')
      // `local *` took --workdir for the same directory; accepted here too, so one name works everywhere.
      .addOption(new Option('--workdir <workdir>', 'the same as --cluster').hideHelp())
  );
}

export const json = (cmd: Command): Command =>
  cmd.option('--json', 'machine-readable output (errors too: one JSON object on stderr)', false);

/** A duration option whose help shows its default with a unit ("default: 30 s", not 30000). */
export function duration(flags: string, description: string, defaultMs?: number): Option {
  const o = new Option(flags, description).argParser(parseDurationArg);
  return defaultMs === undefined ? o : o.default(defaultMs, formatDurationMs(defaultMs));
}

export interface RawTarget {
  cluster?: string;
  workdir?: string;
  haDir?: string;
  address?: string;
  jobmanager?: string;
}

/** The one flag given twice under two names, or undefined; both names with different values is a usage error. */
export function either(a: [string, string | undefined], b: [string, string | undefined]): string | undefined {
  if (a[1] !== undefined && b[1] !== undefined && a[1] !== b[1])
    throw new UsageError(`${a[0]} ${a[1]} and ${b[0]} ${b[1]} name different places; give one of them`);
  return a[1] ?? b[1];
}

export function target(o: RawTarget): Omit<RawTarget, 'jobmanager' | 'workdir'> {
  const address = either(['--address', o.address], ['--jobmanager', o.jobmanager]);
  const cluster = either(['--cluster', o.cluster], ['--workdir', o.workdir]);
  return {
    ...(cluster !== undefined ? { cluster } : {}),
    ...(o.haDir !== undefined ? { haDir: o.haDir } : {}),
    ...(address !== undefined ? { address } : {}),
  };
}

/** `local *` and `logs` name their cluster with --cluster, as every other command; --workdir stays accepted. */
export interface RawWorkdir {
  cluster?: string;
  workdir?: string;
}

export function workdirOf(o: RawWorkdir): string {
  return either(['--cluster', o.cluster], ['--workdir', o.workdir]) ?? DEFAULT_WORKDIR;
}

export function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
}
