// The `rebound local` commands, one file per command group in local/.
export { FIRST_REST_PORT, httpPortFor } from './local/ports.js';
export { applyShuffleDefault, localUp, recoveryLine, shuffleLine } from './local/up.js';
export { localDown, localStatus, localStatusReport, type LocalStatusReport } from './local/status.js';
export { localStartJobMaster, localStartShuffleWorker, localStartTaskManager } from './local/start.js';
export { localKillLeader, type KillLeaderReport } from './local/kill-leader.js';
