import { Option, type Command } from 'commander';
import { parseJobIdPrefix } from '../args.js';
import { DEFAULT_WORKDIR } from '../names.js';
import { type CommandContext, either, json, optional, type RawWorkdir, workdirOf } from './shared.js';

/** `rebound config` and `rebound logs`. */
export function addToolCommands(program: Command, { handlers, run }: CommandContext): void {
  json(
    program
      .command('config')
      .description(
        'list the configuration keys with their defaults, or with --cluster the values a local cluster runs with',
      )
      .option('--cluster [workdir]', `show the values in force on the local cluster (default: ./${DEFAULT_WORKDIR})`)
      .option('--workdir [workdir]', 'the same as --cluster')
      .option('-a, --all', 'also the debug.* keys (crash points and switches for tests)'),
  ).action((o: { json: boolean; cluster?: string | boolean; workdir?: string | boolean; all?: boolean }) => {
    // Given without a value, either flag names the default cluster directory.
    const dir = (v: string | boolean | undefined): string | undefined =>
      v === undefined ? undefined : v === true ? DEFAULT_WORKDIR : String(v);
    const cluster = either(['--cluster', dir(o.cluster)], ['--workdir', dir(o.workdir)]);
    return run(
      handlers.config({
        json: o.json,
        ...(o.all === true ? { all: true } : {}),
        ...optional('cluster', cluster),
      }),
    );
  });

  json(
    program
      .command('logs')
      .description("pretty-print the logs of a local cluster's processes (the files stay JSON)")
      .argument('[id]', 'process id (jm-1, tm-2, ...); default: every process, merged by time')
      .option('--cluster <dir>', `cluster directory (default: ./${DEFAULT_WORKDIR})`)
      .option('--workdir <dir>', 'the same as --cluster')
      .option('-f, --follow', 'keep printing new lines until interrupted', false)
      .addOption(
        new Option('--level <level>', 'lowest level shown')
          .choices(['trace', 'debug', 'info', 'warn', 'error', 'fatal'])
          .default('info'),
      )
      .option('--job <job-id>', 'only lines about this job (or a unique prefix of its id)', parseJobIdPrefix),
  ).action((id: string | undefined, o: RawWorkdir & { follow: boolean; level: string; json: boolean; job?: string }) =>
    run(
      handlers.logs({
        workdir: workdirOf(o),
        follow: o.follow,
        level: o.level,
        json: o.json,
        ...optional('id', id),
        ...optional('jobId', o.job),
      }),
    ),
  );
}
