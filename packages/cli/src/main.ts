import { defaultHandlers } from './handlers.js';
import { processIo } from './io.js';
import { runCli } from './program.js';

// The `rebound` executable: bin/rebound.js runs this file's build (scripts/build.mjs).
// Before anything is created: work directories, HA state, partitions, logs and secrets are this
// user's alone (0700 directories, 0600 files); job modules, data and read capabilities live there.
process.umask(0o077);
const io = processIo();
const code = await runCli(process.argv.slice(2), io, defaultHandlers(io));
// Open gRPC channels or timers must not keep a finished command alive.
process.exit(code);
