import { runJobMaster, runTaskManager } from './daemon.js';
import { runEvents } from './events.js';
import { config } from './info.js';
import type { CliIo } from './io.js';
import { cancel, list, status, submit, watch } from './jobs.js';
import { leader } from './leader.js';
import { logs } from './logs.js';
import { info } from './plan.js';
import { localDown, localKillLeader, localStartJobMaster, localStartTaskManager, localStatus, localUp } from './local.js';
import type { CommandHandlers } from './options.js';

/** The real implementations of every command. */
export function defaultHandlers(io: CliIo): CommandHandlers {
  return {
    jobmaster: (o) => runJobMaster(o, io),
    taskmanager: (o) => runTaskManager(o, io),
    localUp: (o) => localUp(o, io),
    localDown: (o) => localDown(o, io),
    localStatus: (o) => localStatus(o, io),
    localKillLeader: (o) => localKillLeader(o, io),
    leader: (o) => leader(o, io),
    localStartJobMaster: (o) => localStartJobMaster(o, io),
    localStartTaskManager: (o) => localStartTaskManager(o, io),
    submit: (o) => submit(o, io),
    list: (o) => list(o, io),
    status: (o) => status(o, io),
    cancel: (o) => cancel(o, io),
    watch: (o) => watch(o, io),
    events: (o) => runEvents(o, io),
    config: (o) => config(o, io),
    info: (o) => info(o, io),
    logs: (o) => logs(o, io),
  };
}
