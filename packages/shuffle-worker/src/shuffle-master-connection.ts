import { CHANNEL_OPTIONS, ClusterSecurity, loadProto, unary } from '@rebound/core';
import type { Clock, Configuration, Logger, ShuffleMasterGatewayClient } from '@rebound/core';
import { LeaderLink, leaderLinkTimings, type LeaderLinkListener, type LeaderRetrieval } from '@rebound/ha';

/** What the connection reports to, and asks of, the worker. */
export interface ShuffleMasterConnectionHost extends LeaderLinkListener {
  /** Jobs of which the worker holds finished partitions (told at every registration). */
  jobsWithPartitions(): string[];
  /** What the worker holds, for the heartbeat. */
  usage(): { partitions: number; bytes: number };
  /** A leader that knows this worker answered a heartbeat naming these jobs as live. */
  onLiveJobs(jobIds: readonly string[]): void;
}

export interface ShuffleMasterConnectionOptions {
  readonly retrieval: LeaderRetrieval;
  readonly workerId: string;
  /** This process's session secret: bound to workerId at registration, carried by every later call. */
  readonly sessionId: string;
  readonly address: string;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * A shuffle worker's link to the leading JobMaster's ShuffleMasterGateway (Celeborn's worker
 * heartbeating its master): the LeaderLink a TaskManager uses, speaking RegisterShuffleWorker and
 * ShuffleWorkerHeartbeat. A lost leader costs nothing here: the partitions stay, and the link keeps
 * trying to register with whichever JobMaster leads next, reporting the jobs it holds.
 */
export class ShuffleMasterConnection {
  private readonly link: LeaderLink<ShuffleMasterGatewayClient>;

  constructor(opts: ShuffleMasterConnectionOptions, host: ShuffleMasterConnectionHost) {
    const security = ClusterSecurity.of(opts.config);
    this.link = new LeaderLink<ShuffleMasterGatewayClient>(
      {
        retrieval: opts.retrieval,
        logger: opts.logger,
        clock: opts.clock,
        ...leaderLinkTimings(opts.config),
        member: 'shuffle worker',
      },
      {
        connect: (leader) => {
          const Ctor = loadProto().ShuffleMasterGateway;
          return new Ctor(leader.address, security.channelCredentials(), security.channelOptions(CHANNEL_OPTIONS));
        },
        close: (client) => client.close(),
        register: async (client, leader, timeoutMs, signal) => {
          const res = await unary(
            client,
            client.RegisterShuffleWorker,
            {
              worker_id: opts.workerId,
              address: opts.address,
              epoch: leader.epoch,
              session_id: opts.sessionId,
              jobs_with_partitions: host.jobsWithPartitions(),
            },
            timeoutMs,
            signal,
          );
          return {
            epoch: res.epoch,
            heartbeatIntervalMs: res.heartbeat_interval_ms,
            heartbeatTimeoutMs: res.heartbeat_timeout_ms,
            detail: { jobmaster: res.jobmaster_id },
          };
        },
        heartbeat: async (client, leader, timeoutMs, signal) => {
          const usage = host.usage();
          const res = await unary(
            client,
            client.ShuffleWorkerHeartbeat,
            {
              worker_id: opts.workerId,
              epoch: leader.epoch,
              session_id: opts.sessionId,
              partitions: usage.partitions,
              bytes: usage.bytes,
            },
            timeoutMs,
            signal,
          );
          // An answer of a leader that does not know us names no jobs: it says nothing about them.
          if (res.registered) host.onLiveJobs(res.live_jobs);
          return { registered: res.registered };
        },
      },
      host,
    );
  }

  start(): void {
    this.link.start();
  }

  stop(): Promise<void> {
    return this.link.stop();
  }

  /** The epoch of the leader this worker is registered with. */
  connectedEpoch(): number | undefined {
    return this.link.connectedEpoch();
  }

  /** Failed registration attempts since start (each is retried); for metrics. */
  get registrationRetries(): number {
    return this.link.registrationRetries;
  }
}
