import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { collect, parseDurationArg, parseNonNegativeInt, parsePositiveInt } from './args.js';
import { HA_DIR_ENV } from './client.js';
import { PROPERTIES_ENV } from './env-properties.js';
import { DEFAULT_WORKDIR } from './cluster-file.js';
import { describeError, errorJson, EXIT_OK, EXIT_USAGE } from './errors.js';
import { formatDurationMs } from './format.js';
import type { CliIo } from './io.js';
import type { CommandHandlers } from './options.js';

function version(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
    return pkg.version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const D_HELP = 'configuration override, repeatable (see `rebound config` for the keys)';

function withDynamic(cmd: Command): Command {
  return cmd.option('-D, --define <key=value>', D_HELP, collect, []);
}

function withClusterTarget(cmd: Command): Command {
  return cmd
    .option('--cluster <workdir>', `local cluster directory whose cluster.json names the HA directory (default: $${HA_DIR_ENV} if set, else ./${DEFAULT_WORKDIR})`)
    .option('--ha-dir <dir>', 'HA directory: the leader is found through its leader.json')
    .option('--address <host:port>', 'talk to this JobMaster directly (no leader re-resolution)');
}

const json = (cmd: Command): Command => cmd.option('--json', 'machine-readable output (errors too: one JSON object on stderr)', false);

/** A duration option whose help shows its default with a unit ("default: 30 s", not 30000). */
function duration(flags: string, description: string, defaultMs?: number): Option {
  const o = new Option(flags, description).argParser(parseDurationArg);
  return defaultMs === undefined ? o : o.default(defaultMs, formatDurationMs(defaultMs));
}

interface RawTarget {
  cluster?: string;
  haDir?: string;
  address?: string;
}

function target(o: RawTarget): RawTarget {
  return {
    ...(o.cluster !== undefined ? { cluster: o.cluster } : {}),
    ...(o.haDir !== undefined ? { haDir: o.haDir } : {}),
    ...(o.address !== undefined ? { address: o.address } : {}),
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>);
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

  // ---- daemons ----
  withDynamic(
    program
      .command('jobmaster')
      .description('run a JobMaster process (leader candidate); prints a JSON ready line on stdout')
      .requiredOption('--ha-dir <dir>', 'HA directory shared by the cluster')
      .option('--id <id>', 'JobMaster id (default: random)')
      .option('--config <file>', 'YAML configuration file')
      .option('--log-file <file>', 'write logs to this file instead of stderr')
      .addOption(duration('--shutdown-timeout <duration>', 'longest graceful shutdown after SIGTERM', 30_000)),
  ).action((o: { haDir: string; id?: string; config?: string; logFile?: string; define: string[]; shutdownTimeout: number }) =>
    run(
      handlers.jobmaster({
        haDir: o.haDir,
        ...optional('id', o.id),
        ...optional('configFile', o.config),
        ...optional('logFile', o.logFile),
        dynamic: o.define,
        shutdownTimeoutMs: o.shutdownTimeout,
      }),
    ),
  );

  withDynamic(
    program
      .command('taskmanager')
      .description('run a TaskManager process; prints a JSON ready line on stdout')
      .requiredOption('--ha-dir <dir>', 'HA directory shared by the cluster (a JobMaster must have used it)')
      .requiredOption('--slots <n>', 'number of task slots', parsePositiveInt)
      .requiredOption('--data-dir <dir>', 'directory for result partitions and cached job modules')
      .option('--id <id>', 'TaskManager id (default: random)')
      .option('--config <file>', 'YAML configuration file')
      .option('--log-file <file>', 'write logs to this file instead of stderr')
      .addOption(duration('--shutdown-timeout <duration>', 'longest graceful shutdown after SIGTERM', 30_000)),
  ).action(
    (o: { haDir: string; slots: number; dataDir: string; id?: string; config?: string; logFile?: string; define: string[]; shutdownTimeout: number }) =>
      run(
        handlers.taskmanager({
          haDir: o.haDir,
          slots: o.slots,
          dataDir: o.dataDir,
          ...optional('id', o.id),
          ...optional('configFile', o.config),
          ...optional('logFile', o.logFile),
          dynamic: o.define,
          shutdownTimeoutMs: o.shutdownTimeout,
        }),
      ),
  );

  // ---- local cluster ----
  const local = program.command('local').description('start, inspect and stop a cluster of local processes');
  const workdir = (cmd: Command): Command => cmd.option('--workdir <dir>', 'cluster directory (HA dir, logs, data, cluster.json)', DEFAULT_WORKDIR);

  withDynamic(
    json(
      workdir(
        local
          .command('up')
          .description('start JobMasters and TaskManagers in the background; returns once a leader is elected and every TaskManager registered'),
      )
        .option('--jobmasters <n>', 'JobMaster processes', parsePositiveInt, 2)
        .option('--taskmanagers <n>', 'TaskManager processes', parseNonNegativeInt, 3)
        .option('--slots <n>', 'slots per TaskManager', parsePositiveInt, 2)
        .option('--config <file>', 'YAML configuration file for every daemon')
        .addOption(duration('--timeout <duration>', 'how long to wait for the cluster to come up', 60_000)),
    ),
  ).action(
    (o: { workdir: string; jobmasters: number; taskmanagers: number; slots: number; config?: string; define: string[]; timeout: number; json: boolean }) =>
      run(
        handlers.localUp({
          workdir: o.workdir,
          jobmasters: o.jobmasters,
          taskmanagers: o.taskmanagers,
          slots: o.slots,
          ...optional('configFile', o.config),
          dynamic: o.define,
          timeoutMs: o.timeout,
          json: o.json,
        }),
      ),
  );

  json(
    workdir(local.command('down').description('stop every process of the local cluster (SIGTERM, then SIGKILL after the timeout)')).addOption(
      duration('--timeout <duration>', 'grace period before SIGKILL', 10_000),
    ),
  ).action((o: { workdir: string; timeout: number; json: boolean }) => run(handlers.localDown({ workdir: o.workdir, timeoutMs: o.timeout, json: o.json })));

  json(workdir(local.command('status').description('which processes are alive, who leads, which TaskManagers are registered'))).action(
    (o: { workdir: string; json: boolean }) => run(handlers.localStatus({ workdir: o.workdir, json: o.json })),
  );

  json(workdir(local.command('kill-leader').description('SIGKILL the leading JobMaster and print its pid'))).action((o: { workdir: string; json: boolean }) =>
    run(handlers.localKillLeader({ workdir: o.workdir, json: o.json })),
  );

  withDynamic(
    json(
      workdir(local.command('start-jobmaster').description('add a JobMaster to the local cluster, or restart one by --id'))
        .option('--id <id>', 'JobMaster id (default: the next free jm-<n>)')
        .addOption(duration('--timeout <duration>', 'how long to wait for the process to be ready', 60_000)),
    ),
  ).action((o: { workdir: string; id?: string; define: string[]; timeout: number; json: boolean }) =>
    run(handlers.localStartJobMaster({ workdir: o.workdir, ...optional('id', o.id), dynamic: o.define, timeoutMs: o.timeout, json: o.json })),
  );

  withDynamic(
    json(
      workdir(local.command('start-taskmanager').description('add a TaskManager to the local cluster, or restart one by --id'))
        .option('--id <id>', 'TaskManager id (default: the next free tm-<n>)')
        .option('--slots <n>', 'slots (default: as given to `local up`)', parsePositiveInt)
        .option('--no-wait', 'do not wait until the leader has registered it')
        .addOption(duration('--timeout <duration>', 'how long to wait for the process to be ready and registered', 60_000)),
    ),
  ).action((o: { workdir: string; id?: string; slots?: number; wait: boolean; define: string[]; timeout: number; json: boolean }) =>
    run(
      handlers.localStartTaskManager({
        workdir: o.workdir,
        ...optional('id', o.id),
        ...optional('slots', o.slots),
        waitRegistered: o.wait,
        dynamic: o.define,
        timeoutMs: o.timeout,
        json: o.json,
      }),
    ),
  );

  withClusterTarget(
    json(
      program
        .command('leader')
        .description('which JobMaster leads: id, address, epoch, and whether it answers (read from leader.json)')
        .option('--id', 'print only the leader\'s id; under docker compose that is its service name: docker compose kill "$(docker compose run --rm -T client leader --id)"', false)
        .option('--timeout <duration>', 'deadline of the health check of the recorded leader', parseDurationArg, 3_000),
    ),
  ).action((o: RawTarget & { json: boolean; id: boolean; timeout: number }) =>
    run(handlers.leader({ ...target(o), json: o.json, idOnly: o.id, timeoutMs: o.timeout })),
  );

  // ---- jobs ----
  withClusterTarget(
    withDynamic(
      json(
        program
          .command('submit')
          .description('submit a job module; waits for the job to end unless --detached (exit 0 only if FINISHED)')
          .argument('<jobfile>', 'job module (.ts or .js) whose default export is defineJob(...)')
          .argument('[job-args...]', 'arguments for the job, after --')
          .option('-d, --detached', 'return once the job is submitted', false)
          .option('-p, --parallelism <n>', 'default parallelism of the job: every operator that sets none runs with N subtasks (as flink run -p)', parsePositiveInt)
          .addOption(duration('--poll-interval <duration>', 'how often progress is polled', 500))
          .addOption(duration('--reconnect-timeout <duration>', 'how long to wait for a leader during a failover (default: 5 min)')),
      ),
    ),
  ).action(
    (
      jobFile: string,
      jobArgs: string[],
      o: RawTarget & { detached: boolean; parallelism?: number; json: boolean; define: string[]; pollInterval: number; reconnectTimeout?: number },
    ) =>
      run(
        handlers.submit({
          ...target(o),
          jobFile,
          jobArgs,
          detached: o.detached,
          ...optional('parallelism', o.parallelism),
          json: o.json,
          dynamic: o.define,
          pollIntervalMs: o.pollInterval,
          ...optional('reconnectTimeoutMs', o.reconnectTimeout),
        }),
      ),
  );

  withClusterTarget(
    json(
      program
        .command('list')
        .description('list the jobs the leader knows (all of them unless --running)')
        .addOption(new Option('-r, --running', 'only jobs that have not ended').conflicts('all'))
        .option('-a, --all', 'every job, ended ones included (the default)'),
    ),
  ).action((o: RawTarget & { json: boolean; running?: boolean }) => run(handlers.list({ ...target(o), json: o.json, running: o.running === true })));

  withDynamic(
    json(
      program
        .command('info')
        .description('print the plan of a job module (vertices, edges, parallelism, sources, sinks) without running it')
        .argument('<jobfile>', 'job module (.ts or .js) whose default export is defineJob(...)')
        .argument('[job-args...]', 'arguments for the job, after --')
        .option('-p, --parallelism <n>', 'default parallelism, as for submit', parsePositiveInt),
    ),
  ).action((jobFile: string, jobArgs: string[], o: { json: boolean; define: string[]; parallelism?: number }) =>
    run(handlers.info({ jobFile, jobArgs, json: o.json, dynamic: o.define, ...optional('parallelism', o.parallelism) })),
  );

  withClusterTarget(
    json(program.command('status').description('per-vertex state of a job, and its recoveries').argument('<job-id>', 'job id (or a unique prefix)')),
  ).action((jobId: string, o: RawTarget & { json: boolean }) => run(handlers.status({ ...target(o), jobId, json: o.json })));

  withClusterTarget(json(program.command('cancel').description('cancel a job').argument('<job-id>', 'job id (or a unique prefix)'))).action(
    (jobId: string, o: RawTarget & { json: boolean }) => run(handlers.cancel({ ...target(o), jobId, json: o.json })),
  );

  withClusterTarget(
    json(
      program
        .command('watch')
        .description('live progress of a job until it ends (exit 0 only if FINISHED); follows leader changes')
        .argument('<job-id>', 'job id (or a unique prefix)')
        .addOption(duration('--poll-interval <duration>', 'how often progress is polled', 500))
        .addOption(duration('--reconnect-timeout <duration>', 'how long to wait for a leader during a failover (default: 5 min)')),
    ),
  ).action((jobId: string, o: RawTarget & { json: boolean; pollInterval: number; reconnectTimeout?: number }) =>
    run(handlers.watch({ ...target(o), jobId, json: o.json, pollIntervalMs: o.pollInterval, ...optional('reconnectTimeoutMs', o.reconnectTimeout) })),
  );

  json(
    program
      .command('events')
      .description("dump a job's JobEventStore from the HA directory (works with no JobMaster running)")
      .argument('<job-id>', 'job id')
      .option('--ha-dir <dir>', 'HA directory (default: that of --cluster)')
      .option('--cluster <workdir>', `local cluster directory (default: ./${DEFAULT_WORKDIR})`),
  ).action((jobId: string, o: { json: boolean; haDir?: string; cluster?: string }) =>
    run(handlers.events({ jobId, json: o.json, ...optional('haDir', o.haDir), ...optional('cluster', o.cluster) })),
  );

  json(
    program
      .command('config')
      .description('list the configuration keys with their defaults, or with --cluster the values a local cluster runs with')
      .option('--cluster [workdir]', `show the values in force on the local cluster (default: ./${DEFAULT_WORKDIR})`),
  ).action((o: { json: boolean; cluster?: string | boolean }) =>
    run(handlers.config({ json: o.json, ...(o.cluster === undefined ? {} : { cluster: o.cluster === true ? DEFAULT_WORKDIR : String(o.cluster) }) })),
  );

  json(
    program
      .command('logs')
      .description("pretty-print the logs of a local cluster's processes (the files stay JSON)")
      .argument('[id]', 'process id (jm-1, tm-2, ...); default: every process, merged by time')
      .option('--workdir <dir>', 'cluster directory', DEFAULT_WORKDIR)
      .option('-f, --follow', 'keep printing new lines until interrupted', false)
      .addOption(new Option('--level <level>', 'lowest level shown').choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal']).default('info'))
      .option('--job <job-id>', 'only lines about this job'),
  ).action((id: string | undefined, o: { workdir: string; follow: boolean; level: string; json: boolean; job?: string }) =>
    run(handlers.logs({ workdir: o.workdir, follow: o.follow, level: o.level, json: o.json, ...optional('id', id), ...optional('jobId', o.job) })),
  );

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
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version') return EXIT_OK;
      // `rebound` or `rebound local` without a command: help already went to stderr.
      if (err.code === 'commander.help' || err.code === 'commander.executeSubCommandAsync') return err.exitCode === 0 ? EXIT_OK : EXIT_USAGE;
    }
    const report = describeError(err, debug);
    const dashes = argv.indexOf('--');
    if ((dashes < 0 ? argv : argv.slice(0, dashes)).includes('--json')) {
      // Scripts asked for JSON: the error too, one object with the stable code.
      io.stderr.write(`${JSON.stringify(errorJson(err, report))}\n`);
      return report.exitCode;
    }
    io.stderr.write(`${report.line}\n`);
    if (report.stack) io.stderr.write(`${report.stack}\n`);
    return report.exitCode;
  }
}
