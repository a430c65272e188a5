import type { Command } from 'commander';
import { parseDurationArg, parseNonNegativeInt, parsePositiveInt } from '../args.js';
import { DEFAULT_WORKDIR } from '../names.js';
import {
  type CommandContext,
  duration,
  json,
  optional,
  type RawTarget,
  type RawWorkdir,
  target,
  withClusterTarget,
  withDynamic,
  workdirOf,
} from './shared.js';

/** `rebound local *` (a cluster of local processes) and `rebound leader`. */
export function addClusterCommands(program: Command, { handlers, run }: CommandContext): void {
  const local = program.command('local').description('start, inspect and stop a cluster of local processes');
  const workdir = (cmd: Command): Command =>
    cmd
      .option('--cluster <dir>', `cluster directory (HA dir, logs, data, cluster.json; default: ./${DEFAULT_WORKDIR})`)
      .option('--workdir <dir>', 'the same as --cluster');

  withDynamic(
    json(
      workdir(
        local
          .command('up')
          .description(
            'start JobMasters and TaskManagers in the background; returns once a leader is elected and every TaskManager registered',
          ),
      )
        .option('--jobmasters <n>', 'JobMaster processes', parsePositiveInt, 2)
        .option('--taskmanagers <n>', 'TaskManager processes', parseNonNegativeInt, 3)
        .option('--slots <n>', 'slots per TaskManager', parsePositiveInt, 2)
        .option(
          '--shuffle-workers <n>',
          'shuffle worker processes (sw-1..); with any, shuffle.type is remote unless -D sets it',
          parseNonNegativeInt,
          0,
        )
        .option('--config <file>', 'YAML configuration file for every daemon')
        .addOption(duration('--timeout <duration>', 'how long to wait for the cluster to come up', 60_000)),
    ),
  ).action(
    (
      o: RawWorkdir & {
        jobmasters: number;
        taskmanagers: number;
        slots: number;
        shuffleWorkers: number;
        config?: string;
        define: string[];
        timeout: number;
        json: boolean;
      },
    ) =>
      run(
        handlers.localUp({
          workdir: workdirOf(o),
          jobmasters: o.jobmasters,
          taskmanagers: o.taskmanagers,
          shuffleWorkers: o.shuffleWorkers,
          slots: o.slots,
          ...optional('configFile', o.config),
          dynamic: o.define,
          timeoutMs: o.timeout,
          json: o.json,
        }),
      ),
  );

  json(
    workdir(
      local
        .command('down')
        .description('stop every process of the local cluster (SIGTERM, then SIGKILL after the timeout)'),
    ).addOption(duration('--timeout <duration>', 'grace period before SIGKILL', 10_000)),
  ).action((o: RawWorkdir & { timeout: number; json: boolean }) =>
    run(handlers.localDown({ workdir: workdirOf(o), timeoutMs: o.timeout, json: o.json })),
  );

  json(
    workdir(
      local.command('status').description('which processes are alive, who leads, which TaskManagers are registered'),
    ),
  ).action((o: RawWorkdir & { json: boolean }) => run(handlers.localStatus({ workdir: workdirOf(o), json: o.json })));

  json(
    workdir(
      local
        .command('kill-leader')
        .description(
          'SIGKILL the leading JobMaster; print which one (id, epoch), then which JobMaster takes over at which epoch and how long that took',
        ),
    )
      .addOption(
        duration(
          '--wait <duration>',
          'how long to wait for a standby to take over (default: high-availability.lease.timeout + 20 s; 30 s with the defaults)',
        ),
      )
      .option('--no-wait', 'return once the leader is dead, without waiting for the takeover'),
  ).action((o: RawWorkdir & { json: boolean; wait?: number | false }) =>
    run(
      handlers.localKillLeader({
        workdir: workdirOf(o),
        json: o.json,
        wait: o.wait !== false,
        ...optional('waitMs', o.wait === false ? undefined : o.wait),
      }),
    ),
  );

  withDynamic(
    json(
      workdir(
        local.command('start-jobmaster').description('add a JobMaster to the local cluster, or restart one by --id'),
      )
        .option('--id <id>', 'JobMaster id (default: the next free jm-<n>)')
        .addOption(duration('--timeout <duration>', 'how long to wait for the process to be ready', 60_000)),
    ),
  ).action((o: RawWorkdir & { id?: string; define: string[]; timeout: number; json: boolean }) =>
    run(
      handlers.localStartJobMaster({
        workdir: workdirOf(o),
        ...optional('id', o.id),
        dynamic: o.define,
        timeoutMs: o.timeout,
        json: o.json,
      }),
    ),
  );

  withDynamic(
    json(
      workdir(
        local
          .command('start-taskmanager')
          .description('add a TaskManager to the local cluster, or restart one by --id'),
      )
        .option('--id <id>', 'TaskManager id (default: the next free tm-<n>)')
        .option('--slots <n>', 'slots (default: as given to `local up`)', parsePositiveInt)
        .option('--no-wait', 'do not wait until the leader has registered it')
        .addOption(
          duration('--timeout <duration>', 'how long to wait for the process to be ready and registered', 60_000),
        ),
    ),
  ).action(
    (
      o: RawWorkdir & {
        id?: string;
        slots?: number;
        wait: boolean;
        define: string[];
        timeout: number;
        json: boolean;
      },
    ) =>
      run(
        handlers.localStartTaskManager({
          workdir: workdirOf(o),
          ...optional('id', o.id),
          ...optional('slots', o.slots),
          waitRegistered: o.wait,
          dynamic: o.define,
          timeoutMs: o.timeout,
          json: o.json,
        }),
      ),
  );

  withDynamic(
    json(
      workdir(
        local
          .command('start-shuffle-worker')
          .description('add a shuffle worker to the local cluster, or restart one by --id (it keeps its partitions)'),
      )
        .option('--id <id>', 'shuffle worker id (default: the next free sw-<n>)')
        .option('--no-wait', 'do not wait until the leader has registered it')
        .addOption(
          duration('--timeout <duration>', 'how long to wait for the process to be ready and registered', 60_000),
        ),
    ),
  ).action((o: RawWorkdir & { id?: string; wait: boolean; define: string[]; timeout: number; json: boolean }) =>
    run(
      handlers.localStartShuffleWorker({
        workdir: workdirOf(o),
        ...optional('id', o.id),
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
        .option(
          '--id',
          'print only the leader\'s id; under docker compose that is its service name: docker compose kill "$(docker compose run --rm -T client leader --id)"',
          false,
        )
        .option('--timeout <duration>', 'deadline of the health check of the recorded leader', parseDurationArg, 3_000),
    ),
  ).action((o: RawTarget & { json: boolean; id: boolean; timeout: number }) =>
    run(handlers.leader({ ...target(o), json: o.json, idOnly: o.id, timeoutMs: o.timeout })),
  );
}
