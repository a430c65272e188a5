import type { Command } from 'commander';
import { parsePositiveInt } from '../args.js';
import { type CommandContext, duration, optional, withDynamic } from './shared.js';

/** `rebound jobmaster`, `rebound taskmanager` and `rebound shuffle-worker`: the daemons. */
export function addDaemonCommands(program: Command, { handlers, run }: CommandContext): void {
  withDynamic(
    program
      .command('jobmaster')
      .description('run a JobMaster process (leader candidate); prints a JSON ready line on stdout')
      .requiredOption('--ha-dir <dir>', 'HA directory shared by the cluster')
      .option('--id <id>', 'JobMaster id (default: random)')
      .option('--config <file>', 'YAML configuration file')
      .option('--log-file <file>', 'write logs to this file instead of stderr')
      .addOption(duration('--shutdown-timeout <duration>', 'longest graceful shutdown after SIGTERM', 30_000)),
  ).action(
    (o: { haDir: string; id?: string; config?: string; logFile?: string; define: string[]; shutdownTimeout: number }) =>
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
    (o: {
      haDir: string;
      slots: number;
      dataDir: string;
      id?: string;
      config?: string;
      logFile?: string;
      define: string[];
      shutdownTimeout: number;
    }) =>
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

  withDynamic(
    program
      .command('shuffle-worker')
      .description(
        'run a shuffle worker (remote shuffle service: keeps result partitions outside TaskManagers); prints a JSON ready line on stdout',
      )
      .requiredOption('--ha-dir <dir>', 'HA directory shared by the cluster (a JobMaster must have used it)')
      .requiredOption('--data-dir <dir>', 'directory for result partitions; kept across restarts')
      .option('--id <id>', 'shuffle worker id (default: the id the data directory was first used with, else random)')
      .option('--config <file>', 'YAML configuration file')
      .option('--log-file <file>', 'write logs to this file instead of stderr')
      .addOption(duration('--shutdown-timeout <duration>', 'longest graceful shutdown after SIGTERM', 30_000)),
  ).action(
    (o: {
      haDir: string;
      dataDir: string;
      id?: string;
      config?: string;
      logFile?: string;
      define: string[];
      shutdownTimeout: number;
    }) =>
      run(
        handlers.shuffleWorker({
          haDir: o.haDir,
          dataDir: o.dataDir,
          ...optional('id', o.id),
          ...optional('configFile', o.config),
          ...optional('logFile', o.logFile),
          dynamic: o.define,
          shutdownTimeoutMs: o.shutdownTimeout,
        }),
      ),
  );
}
