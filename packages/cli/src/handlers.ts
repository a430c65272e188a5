import type { CliIo } from './io.js';
import type { CommandHandlers } from './options.js';

/**
 * The real implementations of every command, each module loaded only when its command runs: a
 * `rebound submit` need not load the daemons, the local-cluster tools or the log formatter
 * (each import is CPU the user waits for before the job starts).
 */
export function defaultHandlers(io: CliIo): CommandHandlers {
  const daemon = () => import('./daemon.js');
  const local = () => import('./local.js');
  const jobs = () => import('./jobs.js');
  return {
    jobmaster: async (o) => (await daemon()).runJobMaster(o, io),
    taskmanager: async (o) => (await daemon()).runTaskManager(o, io),
    localUp: async (o) => (await local()).localUp(o, io),
    localDown: async (o) => (await local()).localDown(o, io),
    localStatus: async (o) => (await local()).localStatus(o, io),
    localKillLeader: async (o) => (await local()).localKillLeader(o, io),
    leader: async (o) => (await import('./leader.js')).leader(o, io),
    localStartJobMaster: async (o) => (await local()).localStartJobMaster(o, io),
    localStartTaskManager: async (o) => (await local()).localStartTaskManager(o, io),
    submit: async (o) => (await jobs()).submit(o, io),
    list: async (o) => (await jobs()).list(o, io),
    status: async (o) => (await jobs()).status(o, io),
    cancel: async (o) => (await jobs()).cancel(o, io),
    watch: async (o) => (await jobs()).watch(o, io),
    events: async (o) => (await import('./events.js')).runEvents(o, io),
    config: async (o) => (await import('./info.js')).config(o, io),
    info: async (o) => (await import('./plan.js')).info(o, io),
    logs: async (o) => (await import('./logs.js')).logs(o, io),
  };
}
