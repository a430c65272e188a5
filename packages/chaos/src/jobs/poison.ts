/**
 * The chaos harness's poison job: harmless in the process that submits it (the harness, which
 * builds the job graph in-process), poison in any other process, i.e. where a JobMaster loads it.
 *   --poison exit|throw|hang --harmless-in-pid PID --input PATH --output DIR
 * The pid, not the command line, tells the submitter apart: the harness runs `rebound submit`
 * inside its own process (vitest's or scripts/chaos.ts), so its argv names no `submit`.
 */
import { defineJob } from '@rebound/api';
import { JobArgumentError, parseOptions, required } from '@rebound/example-support';

const USAGE = 'poison --poison exit|throw|hang --harmless-in-pid PID --input PATH --output DIR';

export default defineJob('chaos-poison', (env, args) => {
  const o = parseOptions(args, USAGE, ['poison', 'harmless-in-pid', 'input', 'output']);
  if (String(process.pid) !== required(o['harmless-in-pid'], 'harmless-in-pid', USAGE)) {
    switch (o.poison) {
      case 'exit':
        process.exit(7);
        break;
      case 'throw':
        throw new Error('chaos poison: thrown while building the job');
      case 'hang':
        for (;;) {
          // A module stuck at load time, as with a synchronous wait for something that never comes.
        }
      default:
        throw new JobArgumentError(`unknown --poison ${String(o.poison)}; usage: ${USAGE}`);
    }
  }
  env.readTextFiles(required(o.input, 'input', USAGE)).writeAsText(required(o.output, 'output', USAGE), (line) => line);
});
