// The `rebound local` commands, one file per command group in local/.
export { FIRST_REST_PORT, httpPortFor } from './local/ports.js';
export { localUp, recoveryLine } from './local/up.js';
export { localDown, localStatus, localStatusReport, type LocalStatusReport } from './local/status.js';
export { localStartJobMaster, localStartTaskManager } from './local/start.js';
export { localKillLeader, type KillLeaderReport } from './local/kill-leader.js';
