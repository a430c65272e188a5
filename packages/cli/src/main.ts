import * as grpc from '@grpc/grpc-js';
import { defaultHandlers } from './handlers.js';
import { processIo } from './io.js';
import { runCli } from './program.js';

// The `rebound` executable (bin/rebound.js imports this after registering tsx).
const io = processIo();
// A client command reports failed calls in its one error line; grpc-js must not add its own.
// (The daemon commands route grpc-js logging into their logger.)
if (io.env.REBOUND_DEBUG !== '1') grpc.setLogVerbosity(grpc.logVerbosity.NONE);
const code = await runCli(process.argv.slice(2), io, defaultHandlers(io));
// Open gRPC channels or timers must not keep a finished command alive.
process.exit(code);
