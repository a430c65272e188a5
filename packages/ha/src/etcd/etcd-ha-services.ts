import { type Configuration, type Logger } from '@rebound/core';
import type { LeaderEpochSource } from '../epoch-fence.js';
import type {
  HighAvailabilityServices,
  JobGraphStore,
  LeaderElection,
  LeaderElectionOptions,
  LeaderRetrieval,
  LeaderStoreOptions,
} from '../ha-services.js';
import type { LeaderInfo } from '../leader-info.js';
import type { EndpointRegistry } from '../endpoints.js';
import { EtcdConnection } from './etcd-connection.js';
import { EtcdEndpointRegistry } from './etcd-endpoint-registry.js';
import { EtcdJobGraphStore } from './etcd-job-graph-store.js';
import { leaderRetryPolicy } from '../retrying-job-record-driver.js';
import type { DefaultLeaderElectionService } from '../default-leader-election-service.js';
import { createEtcdLeaderElectionService } from './etcd-leader-election-driver.js';
import { leaderFromKv } from './etcd-leader-record.js';
import { createEtcdLeaderRetrievalService } from './etcd-leader-retrieval-driver.js';

/**
 * The etcd backend (`high-availability.type: etcd`): election, leader retrieval and job records in
 * etcd under `/<cluster-id>/`, job modules and the JobEventStore in `storageDir`. One etcd client
 * per process, shared by everything created here.
 */
export class EtcdHaServices implements HighAvailabilityServices {
  readonly type = 'etcd' as const;
  readonly connection: EtcdConnection;
  private readonly elections = new Set<DefaultLeaderElectionService>();
  private endpointRegistry: EtcdEndpointRegistry | undefined;

  constructor(
    readonly storageDir: string,
    private readonly config: Configuration,
  ) {
    this.connection = new EtcdConnection(config);
  }

  describe(): string {
    return this.connection.describe();
  }

  createLeaderElectionService(o: LeaderElectionOptions): LeaderElection {
    const election = createEtcdLeaderElectionService({
      connection: this.connection,
      contenderId: o.contenderId,
      address: o.address,
      config: this.config,
      logger: o.logger,
      ...(o.clock ? { clock: o.clock } : {}),
    });
    this.elections.add(election);
    return election;
  }

  createLeaderRetrievalService(logger: Logger): LeaderRetrieval {
    return createEtcdLeaderRetrievalService(
      this.connection,
      logger,
      this.config.getDurationMs('high-availability.lease.poll-interval'),
    );
  }

  async getLeader(): Promise<LeaderInfo | undefined> {
    const { kv } = await this.connection.get(this.connection.keys.leader);
    return kv ? leaderFromKv(kv) : undefined;
  }

  leaderEpochSource(): LeaderEpochSource {
    return async () => {
      const { kv } = await this.connection.get(this.connection.keys.leader);
      return kv ? Number(kv.create_revision) : undefined;
    };
  }

  fencingEpochSource(epoch: number): () => Promise<number> {
    return async () => {
      // While this process's lease of `epoch` cannot have expired, nobody else can lead: no round trip.
      for (const e of this.elections) if (e.currentEpoch() === epoch) return epoch;
      const { kv } = await this.connection.get(this.connection.keys.leader);
      const current = kv ? Number(kv.create_revision) : 0;
      // Nobody leads, or another epoch does: either way `epoch` is fenced off.
      return current === epoch ? epoch : Math.max(current, epoch + 1);
    };
  }

  jobGraphStore(): JobGraphStore {
    return new EtcdJobGraphStore(this.connection, this.storageDir, undefined);
  }

  leaderJobGraphStore(epoch: number, options?: LeaderStoreOptions): JobGraphStore {
    const fence = {
      epoch,
      onFenced: (reason: string) => {
        for (const e of this.elections) e.onFenced(epoch, reason);
      },
    };
    return new EtcdJobGraphStore(this.connection, this.storageDir, fence, leaderRetryPolicy(this.config, options));
  }

  endpoints(): EndpointRegistry {
    this.endpointRegistry ??= new EtcdEndpointRegistry(
      this.connection,
      this.config.getDurationMs('high-availability.lease.timeout'),
      this.config.getDurationMs('high-availability.lease.poll-interval'),
    );
    return this.endpointRegistry;
  }

  async assertUsable(): Promise<void> {
    await this.connection.get(this.connection.keys.leader);
  }

  async close(): Promise<void> {
    await this.endpointRegistry?.close();
    this.connection.close();
  }
}
