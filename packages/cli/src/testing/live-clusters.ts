/** What the exit hook needs of a cluster: kill its processes without waiting. */
export interface KillableCluster {
  killAllSync(): void;
}

const live = new Set<KillableCluster>();
let exitHookInstalled = false;

/** SIGKILLs every cluster this process started and did not stop (exit hooks, Ctrl-C). */
export function killLiveClusters(): void {
  for (const cluster of live) cluster.killAllSync();
  live.clear();
}

/** Remembers a started cluster until `untrack`, so that an exit without stop() kills it. */
export function track(cluster: KillableCluster): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    // If a run dies without stop(), do not leave detached daemons behind.
    process.on('exit', killLiveClusters);
  }
  live.add(cluster);
}

export function untrack(cluster: KillableCluster): void {
  live.delete(cluster);
}
