import { type Configuration, systemClock } from '@rebound/core';
import { type EndpointRegistry, FileEndpointRegistry } from '../endpoints.js';
import { HaPaths, assertHaDirInitialized } from './ha-dir.js';
import type {
  HighAvailabilityServices,
  JobGraphStore,
  LeaderElection,
  LeaderElectionOptions,
  LeaderRetrieval,
  LeaderStoreOptions,
} from '../ha-services.js';
import type { LeaderEpochSource } from '../epoch-fence.js';
import { FileJobGraphStore } from './file-job-graph-store.js';
import { leaderRetryPolicy } from '../retrying-job-record-driver.js';
import { LeaderElectionService } from './file-leader-election-driver.js';
import { type LeaderInfo, readCurrentEpoch, readLeader } from '../leader-info.js';
import { LeaderRetrievalService } from './file-leader-retrieval-driver.js';
import type { Logger } from '@rebound/core';

/**
 * The embedded backend (`high-availability.type: file`, the default): a lease directory and
 * leader.json in the HA directory, jobs under `<storageDir>/jobs/` (storageDir defaults to the HA
 * directory, so the layout is the one of "The HA directory" in docs/architecture/ha.md).
 */
export class FileHaServices implements HighAvailabilityServices {
  readonly type = 'file' as const;

  constructor(
    readonly haDir: string,
    readonly storageDir: string,
    private readonly config: Configuration,
  ) {}

  describe(): string {
    return `HA directory ${this.haDir}`;
  }

  createLeaderElectionService(o: LeaderElectionOptions): LeaderElection {
    return new LeaderElectionService({
      haDir: this.haDir,
      contenderId: o.contenderId,
      address: o.address,
      config: this.config,
      logger: o.logger,
      clock: o.clock ?? systemClock,
    });
  }

  createLeaderRetrievalService(logger: Logger): LeaderRetrieval {
    return new LeaderRetrievalService({ haDir: this.haDir, config: this.config, logger });
  }

  getLeader(): Promise<LeaderInfo | undefined> {
    return readLeader(this.haDir);
  }

  leaderEpochSource(): LeaderEpochSource {
    return async () => (await readLeader(this.haDir))?.epoch;
  }

  fencingEpochSource(): () => Promise<number> {
    // The highest allocated epoch: a standby that won the lease fences the old leader off as soon
    // as it owns its epoch file, before it writes leader.json.
    return () => readCurrentEpoch(this.haDir);
  }

  jobGraphStore(): JobGraphStore {
    return new FileJobGraphStore(this.storageDir);
  }

  leaderJobGraphStore(_epoch?: number, options?: LeaderStoreOptions): JobGraphStore {
    return new FileJobGraphStore(this.storageDir, leaderRetryPolicy(this.config, options));
  }

  endpoints(): EndpointRegistry {
    return new FileEndpointRegistry(this.haDir);
  }

  assertUsable(): Promise<void> {
    return assertHaDirInitialized(this.haDir);
  }

  async close(): Promise<void> {}

  /** The lease directory, for messages. */
  get lockDir(): string {
    return HaPaths.lockDir(this.haDir);
  }
}
