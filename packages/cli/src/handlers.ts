import type { CliIo } from './io.js';
import type { CommandHandlers } from './options.js';

/**
 * The real implementations of every command, each module loaded only when its command runs: a
 * `rebound submit` need not load the daemons, the local-cluster tools or the log formatter
 * (each import is CPU the user waits for before the job starts).
 */
export function defaultHandlers(io: CliIo): CommandHandlers {
  // Before a command's module loads grpc-js: a client command reports failed calls in its one
  // error line, and grpc-js must not add its own (the daemons route its logging into their logger).
  // Here and not in main.ts, so that --help and usage errors never load grpc-js at all.
  const quiet = async <T>(load: () => Promise<T>): Promise<T> => {
    if (io.env.REBOUND_DEBUG !== '1') {
      const grpc = await import('@grpc/grpc-js');
      grpc.setLogVerbosity(grpc.logVerbosity.NONE);
    }
    return load();
  };
  const daemon = () => quiet(() => import('./daemon.js'));
  const local = () => quiet(() => import('./local.js'));
  const jobs = () => quiet(() => import('./jobs.js'));
  return {
    jobmaster: async (o) => (await daemon()).runJobMaster(o, io),
    taskmanager: async (o) => (await daemon()).runTaskManager(o, io),
    shuffleWorker: async (o) => (await daemon()).runShuffleWorker(o, io),
    localUp: async (o) => (await local()).localUp(o, io),
    localDown: async (o) => (await local()).localDown(o, io),
    localStatus: async (o) => (await local()).localStatus(o, io),
    localKillLeader: async (o) => (await local()).localKillLeader(o, io),
    leader: async (o) => (await quiet(() => import('./leader.js'))).leader(o, io),
    localStartJobMaster: async (o) => (await local()).localStartJobMaster(o, io),
    localStartTaskManager: async (o) => (await local()).localStartTaskManager(o, io),
    localStartShuffleWorker: async (o) => (await local()).localStartShuffleWorker(o, io),
    submit: async (o) => (await jobs()).submit(o, io),
    results: async (o) => (await jobs()).results(o, io),
    list: async (o) => (await jobs()).list(o, io),
    status: async (o) => (await jobs()).status(o, io),
    cancel: async (o) => (await jobs()).cancel(o, io),
    watch: async (o) => (await jobs()).watch(o, io),
    events: async (o) => (await quiet(() => import('./events.js'))).runEvents(o, io),
    config: async (o) => (await quiet(() => import('./info.js'))).config(o, io),
    info: async (o) => (await quiet(() => import('./plan.js'))).info(o, io),
    init: async (o) => (await quiet(() => import('./init.js'))).init(o, io),
    logs: async (o) => (await quiet(() => import('./logs.js'))).logs(o, io),
  };
}
