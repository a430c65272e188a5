import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { ConfigError, Configuration, closestMatch } from '@rebound/core';
import { PROPERTIES_ENV, propertiesFromEnv } from './env-properties.js';
import { HA_DIR_ENV } from './names.js';
import { describeError, errorJson, EXIT_OK, EXIT_USAGE, UsageError } from './errors.js';
import { JOB_FILE_COMMANDS, routeJobArgs } from './job-args.js';
import type { CliIo } from './io.js';
import type { CommandHandlers } from './options.js';
import { addClusterCommands } from './program/cluster.js';
import { addDaemonCommands } from './program/daemons.js';
import { addJobCommands } from './program/jobs.js';
import type { CommandContext } from './program/shared.js';
import { addToolCommands } from './program/tools.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

/**
 * Checks each `-D key=value` before the command does anything: an unknown key (with the key it
 * most likely meant) or a malformed value is a usage error. Test-only keys are left to the
 * command, which sees debug.allow-test-options of the whole configuration.
 */
function validateDefines(raw: readonly string[]): void {
  for (const entry of raw) {
    try {
      const record = Configuration.parseDynamicProperties([entry]);
      Configuration.of({ 'debug.allow-test-options': 'true', ...record });
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const key = entry.slice(0, entry.indexOf('=')).trim();
      const message = err.message.startsWith('-D ')
        ? err.message
        : err.message.startsWith(`${key}: `)
          ? `-D ${err.message}`
          : `-D ${entry}: ${err.message}`;
      throw new UsageError(message, false);
    }
  }
}

/** `$REBOUND_PROPERTIES` is read by every command: one that does not parse stops all of them. */
function validatePropertiesEnv(env: Readonly<Record<string, string | undefined>>): void {
  try {
    propertiesFromEnv(env);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, false);
    throw err;
  }
}

/**
 * The `rebound` command tree. Parsing only: each action hands typed options to a handler and
 * stores its exit code through `setExitCode`.
 */
export function buildProgram(handlers: CommandHandlers, io: CliIo, setExitCode: (code: number) => void): Command {
  const program = new Command('rebound');
  program
    .description('Rebound: a batch cluster whose jobs survive the death of their JobMaster (FLIP-383)')
    .version(version(), '-V, --version')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      // The top-level handler prints one `rebound: ...` line instead.
      outputError: () => {},
    })
    .showSuggestionAfterError(true)
    .allowExcessArguments(false)
    .addHelpText(
      'after',
      `\nEnvironment:\n  ${HA_DIR_ENV}  HA directory of the cluster for client commands given no --cluster, --ha-dir or --address\n                  (the docker compose client service sets it)` +
        `\n  ${PROPERTIES_ENV}  configuration lines 'key: value' for every command, after --config, before -D\n                  (e.g. high-availability.type: etcd; docker-compose.etcd.yml sets it)`,
    );

  const run = (p: Promise<number>): Promise<void> => p.then(setExitCode);
  program.hook('preAction', (_program, action) => {
    validatePropertiesEnv(io.env);
    const define = (action.opts() as { define?: unknown }).define;
    if (Array.isArray(define)) validateDefines(define as string[]);
  });

  const context: CommandContext = { handlers, run };
  addDaemonCommands(program, context);
  addClusterCommands(program, context);
  addJobCommands(program, context);
  addToolCommands(program, context);
  return program;
}

/**
 * Parses `argv` (without node and script) and runs the command. Never throws: every failure
 * becomes one `rebound: ...` line on stderr and an exit code (1 failure, 2 usage).
 */
export async function runCli(argv: readonly string[], io: CliIo, handlers: CommandHandlers): Promise<number> {
  let exitCode = EXIT_OK;
  const program = buildProgram(handlers, io, (code) => {
    exitCode = code;
  });
  const debug = io.env.REBOUND_DEBUG === '1';
  const routed = routeArgv(argv, program);
  try {
    // `help local kill-leader` is `local kill-leader --help` (commander's own help command stops at `local`).
    const topic = helpTopic(argv, program);
    await program.parseAsync(topic ? [...topic, '--help'] : routed, { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT_OK;
      // `rebound` or `rebound local` without a command: help already went to stderr.
      if (err.code === 'commander.help' || err.code === 'commander.executeSubCommandAsync')
        return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    const report = describeError(err, debug);
    const dashes = routed.indexOf('--');
    if ((dashes < 0 ? routed : routed.slice(0, dashes)).includes('--json')) {
      // Scripts asked for JSON: the error too, one object with the stable code.
      io.stderr.write(`${JSON.stringify(errorJson(err, report))}\n`);
      return report.exitCode;
    }
    io.stderr.write(`${report.line}\n`);
    if (report.stack) io.stderr.write(`${report.stack}\n`);
    return report.exitCode;
  }
}

/** `submit`/`run`/`info`: the job's own arguments follow the job file (see routeJobArgs). */
function routeArgv(argv: readonly string[], program: Command): string[] {
  const name = argv[0];
  if (name === undefined || !JOB_FILE_COMMANDS.has(name)) return [...argv];
  const cmd = program.commands.find((c) => c.name() === name || c.aliases().includes(name));
  return cmd ? [name, ...routeJobArgs(argv.slice(1), cmd)] : [...argv];
}

/**
 * The command path `help <command…>` asks about, or undefined for anything else. `help nosuch` is
 * an error with a suggestion, not the whole help with exit 0.
 */
function helpTopic(argv: readonly string[], program: Command): readonly string[] | undefined {
  if (argv[0] !== 'help' || argv.length < 2) return undefined;
  let cmd = program;
  for (const word of argv.slice(1)) {
    const next = cmd.commands.find((c) => c.name() === word || c.aliases().includes(word));
    if (!next) {
      const names = cmd.commands.flatMap((c) => [c.name(), ...c.aliases()]);
      const near = closestMatch(word, names);
      const path = [...argv.slice(1, argv.indexOf(word)), word].join(' ');
      throw new UsageError(
        `no command '${path}'${near ? ` (did you mean '${near}'?)` : ''}; 'rebound help' lists the commands`,
        false,
      );
    }
    cmd = next;
  }
  return argv.slice(1);
}
