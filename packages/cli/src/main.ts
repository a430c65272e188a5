import { defaultHandlers } from './handlers.js';
import { processIo } from './io.js';
import { runCli } from './program.js';

// The `rebound` executable: bin/rebound.js runs this file's build (scripts/build.mjs).
// Before anything is created: work directories, HA state, partitions, logs and secrets are this
// user's alone (0700 directories, 0600 files); job modules, data and read capabilities live there.
process.umask(0o077);
const io = processIo();
// A reader that went away (`rebound events JOB | head`) ends the command quietly, as for any tool.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const code = await runCli(process.argv.slice(2), io, defaultHandlers(io));
// A pipe takes output asynchronously, and process.exit drops what it has not taken yet
// (`rebound events JOB | wc -l` counted a few hundred of 100,006 lines): wait for it first.
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
// Open gRPC channels or timers must not keep a finished command alive.
process.exit(code);

function flushed(out: NodeJS.WriteStream): Promise<void> {
  // A write's callback runs once every write before it has been handed over (or has failed).
  return new Promise((resolve) => (out.writableLength === 0 ? resolve() : out.write('', () => resolve())));
}
