import type { EndpointRegistry } from '@rebound/ha';

/**
 * What the HA services know of the cluster's TaskManager processes, so that a reconciling leader
 * stops waiting for TaskManagers that will not come back (the wait stays bounded by
 * `execution.batch.job-recovery.previous-worker.recovery.timeout` when it cannot tell).
 */
export interface TaskManagerDirectory {
  /** Ids of the TaskManagers whose endpoints are published (some may be stale). */
  published(): Promise<readonly string[]>;
  /**
   * The ids among `ids` known to be gone: no endpoint (withdrawn, or expired with its etcd lease),
   * or one whose process is not running (known on its own host only).
   */
  gone(ids: readonly string[]): Promise<ReadonlySet<string>>;
}

/** The directory of the processes' published endpoints (`HighAvailabilityServices.endpoints()`). */
export function taskManagerDirectoryOf(endpoints: EndpointRegistry): TaskManagerDirectory {
  // Shuffle workers hold partitions too (remote shuffle): a reconciling leader waits for them alike.
  const taskManagers = async () =>
    (await endpoints.list()).filter((e) => e.role === 'taskmanager' || e.role === 'shuffle-worker');
  return {
    published: async () => (await taskManagers()).map((e) => e.id),
    gone: async (ids) => {
      const byId = new Map((await taskManagers()).map((e) => [e.id, e]));
      return new Set(
        ids.filter((id) => {
          const ep = byId.get(id);
          return !ep || endpoints.alive(ep) === false;
        }),
      );
    },
  };
}
