import type { JobGraphStore } from '@rebound/ha';
import { JobRecords } from '../job-records.js';
import { StoredJobs } from '../stored-jobs.js';
import type { JobsSource } from './leader-view.js';

/**
 * A job that has not ended while no leader runs it: Flink's name for a job whose JobMaster lost
 * its leadership and that stays in the HA store for the next leader to take over.
 */
const NO_LEADER_STATE = 'SUSPENDED';

/** The value of ANSWERED_FROM_HEADER, and of `answeredFrom.source` in the body. */
export const HA_STORE_SOURCE = 'ha-store';

/**
 * Set on an answer a standby computed from the HA store because no leader answered:
 * `ha-store; as-of=<ISO time of the read>`. The body says the same in `answeredFrom`.
 */
export const ANSWERED_FROM_HEADER = 'x-rebound-answered-from';

/** Where an answer came from when not from the leader; added to the JSON body. */
export interface AnsweredFrom {
  readonly source: typeof HA_STORE_SOURCE;
  /** The JobMaster that read the store. */
  readonly jobmaster: string;
  /** When it read it: later changes (a new leader finishing the job) are not in the answer. */
  readonly asOfMs: number;
  /** Why no leader answered. */
  readonly reason: string;
}

/**
 * The job documents as the HA store tells them, for a standby to answer with while no leader
 * does (none is recorded, or the recorded one cannot be reached): through the read-only job
 * store of the HA services, so the same for every HA driver. Nothing is live: no TaskManager is
 * registered and no job runs here.
 */
export function haStoreJobs(store: JobGraphStore): JobsSource {
  const records = new JobRecords(store);
  const stored = new StoredJobs(store, records);
  return {
    registry: { overview: () => [] },
    list: () => stored.list(() => undefined, NO_LEADER_STATE),
    status: (jobId) => stored.status(jobId, { state: NO_LEADER_STATE }),
    graphOf: () => undefined,
    exceptionHistory: (jobId) => records.exceptions(jobId),
    liveJobIds: () => [],
  };
}
