export { startRestServer, type RestServer, type RestServerOptions } from './rest-server.js';
export type { LeaderView } from './leader-view.js';
export type { ClusterView, ClusterJobMaster, ClusterTaskManager } from './cluster-view.js';
export * from './flink-json.js';
