/**
 * `npm run test:compose`, remote shuffle: the failover of compose.e2e.ts on
 * `-f docker-compose.yml -f docker-compose.remote-shuffle.yml` (two shuffle workers with volumes
 * of their own, shuffle.type: remote), where the leader and the TaskManager that ran most finished
 * sources are killed together. Under the TaskManager shuffle that TaskManager's finished sources
 * would be missing and run again; here every partition is found on the workers. Running tasks are
 * kept (the default): those on the other two TaskManagers are adopted, not deployed again.
 */
import { expect } from 'vitest';
import { composeFailoverSuite } from './failover-suite.js';

composeFailoverSuite({
  name: 'remote-shuffle',
  overrides: ['docker-compose.remote-shuffle.yml'],
  extraServices: ['shuffle-worker-1', 'shuffle-worker-2'],
  eventsDir: '/rebound/ha',
  killBusiestTaskManager: true,
  // The default: sources running on the TaskManagers that live on are adopted, the dead one's rerun.
  keepRunningTasks: true,
  // What goes wrong before the cluster runs is the base file's, tested by compose.e2e.ts.
  beforeUp: () => {},
  checkReport: (report) => {
    expect(report.partitionsMissing).toBe(0);
    expect(report.partitionsReused).toBeGreaterThan(0);
    expect(report.partitionsReusedOnShuffleWorkers).toBe(report.partitionsReused);
  },
});
