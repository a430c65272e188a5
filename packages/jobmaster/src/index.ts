export { startJobMasterProcess } from './jobmaster-process.js';
export type { JobMasterProcess, JobMasterProcessOptions } from './jobmaster-process.js';
export { decideParallelismAndInputs, splitEvenly } from './parallelism-decider.js';
export type { SubpartitionRange, VertexParallelismAndInputs } from './parallelism-decider.js';
export { startRestServer, type RestServer, type RestServerOptions, type LeaderView } from './rest/index.js';
