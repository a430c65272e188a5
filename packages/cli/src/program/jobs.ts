import { Option, type Command } from 'commander';
import { parsePositiveInt } from '../args.js';
import { DEFAULT_WORKDIR } from '../names.js';
import {
  type CommandContext,
  duration,
  either,
  json,
  optional,
  type RawTarget,
  type RawWorkdir,
  target,
  withClusterTarget,
  withDynamic,
} from './shared.js';

/** Submitting, inspecting and steering jobs: submit, results, list, info, init, status, cancel, watch, events. */
export function addJobCommands(program: Command, { handlers, run }: CommandContext): void {
  withClusterTarget(
    withDynamic(
      json(
        program
          .command('submit')
          .alias('run')
          .description(
            'submit a job module; waits for the job to end unless --detached (exit 0 only if FINISHED); `run` is the same (as flink run)',
          )
          .argument('<jobfile>', 'job module (.ts or .js) whose default export is defineJob(...)')
          .argument(
            '[job-args...]',
            'arguments for the job: everything after the job file (a -- before them is optional)',
          )
          .option('-d, --detached', 'return once the job is submitted', false)
          .option(
            '--output-format <format>',
            'how a collect() result is printed: table (default on a terminal), csv, jsonl (default when piped) or json (one array)',
          )
          .option(
            '-p, --parallelism <n>',
            'default parallelism of the job: every operator that sets none runs with N subtasks (as flink run -p)',
            parsePositiveInt,
          )
          .addOption(duration('--poll-interval <duration>', 'how often progress is polled', 500))
          .addOption(
            duration(
              '--reconnect-timeout <duration>',
              'how long to wait for a leader during a failover (default: 5 min)',
            ),
          ),
      ),
    ),
  ).action(
    (
      jobFile: string,
      jobArgs: string[],
      o: RawTarget & {
        detached: boolean;
        parallelism?: number;
        json: boolean;
        define: string[];
        pollInterval: number;
        reconnectTimeout?: number;
        outputFormat?: string;
      },
    ) =>
      run(
        handlers.submit({
          ...optional('outputFormat', o.outputFormat),
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
    program
      .command('results')
      .description(
        "print a finished job's collect() result again (as submit printed it), from whichever JobMaster leads",
      )
      .argument('<job-id>', 'job id (or a unique prefix, or a job name)')
      .option(
        '--output-format <format>',
        'table (default on a terminal), csv, jsonl (default when piped) or json (one array)',
      ),
  ).action((jobId: string, o: RawTarget & { outputFormat?: string }) =>
    run(handlers.results({ ...target(o), jobId, ...optional('outputFormat', o.outputFormat) })),
  );

  withClusterTarget(
    json(
      program
        .command('list')
        .description('list the jobs the leader knows (all of them unless --running)')
        .addOption(new Option('-r, --running', 'only jobs that have not ended').conflicts('all'))
        .option('-a, --all', 'every job, ended ones included (the default)'),
    ),
  ).action((o: RawTarget & { json: boolean; running?: boolean }) =>
    run(handlers.list({ ...target(o), json: o.json, running: o.running === true })),
  );

  withDynamic(
    json(
      program
        .command('info')
        .description('print the plan of a job module (vertices, edges, parallelism, sources, sinks) without running it')
        .argument('<jobfile>', 'job module (.ts or .js) whose default export is defineJob(...)')
        .argument(
          '[job-args...]',
          'arguments for the job: everything after the job file (a -- before them is optional)',
        )
        .option('-p, --parallelism <n>', 'default parallelism, as for submit', parsePositiveInt),
    ),
  ).action((jobFile: string, jobArgs: string[], o: { json: boolean; define: string[]; parallelism?: number }) =>
    run(
      handlers.info({ jobFile, jobArgs, json: o.json, dynamic: o.define, ...optional('parallelism', o.parallelism) }),
    ),
  );

  json(
    program
      .command('init')
      .description(
        'scaffold a job project: package.json, tsconfig.json, job.ts, a test that runs it in one process, a README',
      )
      .argument('[dir]', 'directory of the project (created if missing)', '.'),
  ).action((dir: string, o: { json: boolean }) => run(handlers.init({ dir, json: o.json })));

  withClusterTarget(
    json(
      program
        .command('status')
        .description('per-vertex state of a job, and its recoveries')
        .argument('<job-id>', 'job id (or a unique prefix, or a job name)'),
    ),
  ).action((jobId: string, o: RawTarget & { json: boolean }) =>
    run(handlers.status({ ...target(o), jobId, json: o.json })),
  );

  withClusterTarget(
    json(
      program
        .command('cancel')
        .description('cancel a job')
        .argument('<job-id>', 'job id (or a unique prefix, or a job name)'),
    ),
  ).action((jobId: string, o: RawTarget & { json: boolean }) =>
    run(handlers.cancel({ ...target(o), jobId, json: o.json })),
  );

  withClusterTarget(
    json(
      program
        .command('watch')
        .description('live progress of a job until it ends (exit 0 only if FINISHED); follows leader changes')
        .argument('<job-id>', 'job id (or a unique prefix, or a job name)')
        .addOption(duration('--poll-interval <duration>', 'how often progress is polled', 500))
        .addOption(
          duration(
            '--reconnect-timeout <duration>',
            'how long to wait for a leader during a failover (default: 5 min)',
          ),
        ),
    ),
  ).action((jobId: string, o: RawTarget & { json: boolean; pollInterval: number; reconnectTimeout?: number }) =>
    run(
      handlers.watch({
        ...target(o),
        jobId,
        json: o.json,
        pollIntervalMs: o.pollInterval,
        ...optional('reconnectTimeoutMs', o.reconnectTimeout),
      }),
    ),
  );

  json(
    program
      .command('events')
      .description("dump a job's JobEventStore from the HA directory (works with no JobMaster running)")
      .argument('<job-id>', 'job id (or a unique prefix, or a job name)')
      .option('--ha-dir <dir>', 'HA directory (default: that of --cluster)')
      .option('--cluster <workdir>', `local cluster directory (default: ./${DEFAULT_WORKDIR})`)
      .addOption(new Option('--workdir <workdir>', 'the same as --cluster').hideHelp()),
  ).action((jobId: string, o: RawWorkdir & { json: boolean; haDir?: string }) =>
    run(
      handlers.events({
        jobId,
        json: o.json,
        ...optional('haDir', o.haDir),
        ...optional('cluster', either(['--cluster', o.cluster], ['--workdir', o.workdir])),
      }),
    ),
  );
}
