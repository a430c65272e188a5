import * as grpc from '@grpc/grpc-js';
import {
  ClusterSecurity,
  HealthServices,
  HealthStatusManager,
  PeriodicTask,
  bindServer,
  errorMessage,
  loadHealthProto,
  loadProto,
  newSessionSecret,
  shutdownServer,
  startMetricsHttpServer,
  systemClock,
} from '@rebound/core';
import type { Clock, Configuration, Logger } from '@rebound/core';
import { EpochFence, LeaderCallGuard, createHaServices, type HighAvailabilityServices } from '@rebound/ha';
import { PartitionStore, createPartitionServiceHandlers, createShuffleIngestHandler } from '@rebound/partition';
import { JobReadCapabilities } from './job-read-capabilities.js';
import { createShuffleWorkerRegistry } from './metrics.js';
import { OrphanedPartitions } from './orphaned-partitions.js';
import { ShuffleMasterConnection } from './shuffle-master-connection.js';
import { ShuffleWorker } from './shuffle-worker.js';

export interface ShuffleWorkerProcess {
  readonly id: string;
  /** host:port of its gRPC server (ShuffleWorkerService, PartitionService, health). */
  readonly address: string;
  close(): Promise<void>;
}

export interface ShuffleWorkerProcessOptions {
  readonly id: string;
  /** Partitions in `<dataDir>/partitions`, read capabilities in `<dataDir>/jobs`; kept across restarts. */
  readonly dataDir: string;
  readonly haDir: string;
  readonly config: Configuration;
  readonly logger: Logger;
  readonly clock?: Clock;
  /** The HA services to use; by default created from `config` (`high-availability.type`) and closed with the process. */
  readonly ha?: HighAvailabilityServices;
}

/**
 * A shuffle worker process (`rebound shuffle-worker`): keeps result partitions outside the
 * TaskManagers that produce them. One gRPC server, behind the cluster secret like a
 * TaskManager's, serves WritePartition and the leader's calls (ShuffleWorkerService), reads
 * (PartitionService, under each job's read capability) and gRPC health. The worker follows the
 * leader through the HA services; its partitions outlive any JobMaster, and this process too: a
 * restarted worker with the same id and data directory serves what it held.
 */
export async function startShuffleWorkerProcess(opts: ShuffleWorkerProcessOptions): Promise<ShuffleWorkerProcess> {
  const clock = opts.clock ?? systemClock;
  const { config } = opts;
  const logger = opts.logger.child({ component: 'ShuffleWorker', shuffleWorkerId: opts.id });
  // Undone in reverse order when a later start-up step fails, and by close().
  const closers: (() => Promise<void> | void)[] = [];
  const closeAll = async (): Promise<void> => {
    for (const close of closers.splice(0).reverse()) {
      try {
        await close();
      } catch (err) {
        logger.warn({ err: errorMessage(err) }, 'shuffle worker shutdown step failed');
      }
    }
  };
  try {
    // Retained: what an earlier process of this worker finished is served again.
    const store = await PartitionStore.open({
      dataDir: opts.dataDir,
      ...PartitionStore.optionsFromConfig(config),
      retainOnOpen: true,
      logger: opts.logger,
      clock: () => clock.now(),
    });
    closers.push(() => store.close());
    const capabilities = await JobReadCapabilities.load(opts.dataDir, logger);
    const ha = opts.ha ?? createHaServices(config, opts.haDir);
    if (opts.ha === undefined) closers.push(() => ha.close());
    // One session per process, as a TaskManager's; unlike a TaskManager, a restarted worker keeps
    // its id and its partitions, and the leader takes its new session at registration.
    const session = newSessionSecret();
    const fence = new EpochFence(ha.leaderEpochSource());
    const worker = new ShuffleWorker({
      id: opts.id,
      store,
      capabilities,
      orphans: new OrphanedPartitions(config.getDurationMs('shuffle-worker.partition.expiry-timeout'), clock),
      guard: new LeaderCallGuard(fence, session, 'shuffle worker', opts.id, logger),
      logger,
    });
    await worker.recover();

    // "" is the process; the ShuffleWorkerService name reads SERVING only while a leader has it registered.
    const health = new HealthStatusManager(
      { [HealthServices.server]: 'NOT_SERVING', [HealthServices.shuffleWorker]: 'NOT_SERVING' },
      { maxWatchStreams: config.getInt('rpc.health.watch.max-streams') },
    );
    const proto = loadProto();
    const security = ClusterSecurity.of(config);
    const server = new grpc.Server(security.serverOptions({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 }));
    server.addService(
      proto.ShuffleWorkerService.service,
      worker.handlers(
        createShuffleIngestHandler(store, {
          logger: opts.logger,
          workerId: opts.id,
          admitWriter: (jobId, readCapability) => worker.admitWriter(jobId, readCapability),
        }),
      ),
    );
    server.addService(
      proto.PartitionService.service,
      createPartitionServiceHandlers(store, opts.logger, {
        checkReadCapability: (jobId, capability, partition) => worker.checkReadCapability(jobId, capability, partition),
      }),
    );
    server.addService(loadHealthProto().Health.service, health.handlers());
    const host = config.getString('shuffle-worker.bind-host');
    const port = await bindServer(server, host, config.getInt('shuffle-worker.port'), security.serverCredentials());
    closers.push(() => shutdownServer(server));
    // Before the server: its watch streams would hold the shutdown for its whole grace period.
    closers.push(() => health.shutdown());
    const address = `${config.getString('shuffle-worker.host') || host}:${port}`;

    const connection = new ShuffleMasterConnection(
      {
        retrieval: ha.createLeaderRetrievalService(
          opts.logger.child({ component: 'ShuffleMasterConnection', shuffleWorkerId: opts.id }),
        ),
        workerId: opts.id,
        sessionId: session,
        address,
        config,
        logger: opts.logger.child({ component: 'ShuffleMasterConnection', shuffleWorkerId: opts.id }),
        clock,
      },
      {
        jobsWithPartitions: () => worker.jobsWithPartitions(),
        usage: () => worker.usage(),
        onLiveJobs: (jobIds) => worker.onLiveJobs(jobIds),
        // Calls of older leaders are refused from now on, also before the new one calls.
        onLeaderElected: (epoch) => fence.raise(epoch),
        onConnected: () => health.setStatus(HealthServices.shuffleWorker, 'SERVING'),
        onLost: () => health.setStatus(HealthServices.shuffleWorker, 'NOT_SERVING'),
      },
    );

    let expiredJobs = 0;
    let sweeping: Promise<unknown> = Promise.resolve();
    const expiry = new PeriodicTask(
      config.getDurationMs('shuffle-worker.partition.expiry-check-interval'),
      () => {
        const sweep = worker.expireOrphans().then((jobs) => {
          expiredJobs += jobs.length;
        });
        sweeping = sweep.catch(() => undefined);
        return sweep;
      },
      (err) => logger.error({ err: errorMessage(err) }, 'orphaned partition expiry failed'),
    );

    const metrics = await startMetricsHttpServer(
      createShuffleWorkerRegistry({
        id: opts.id,
        store,
        usage: () => worker.usage(),
        registrationRetries: () => connection.registrationRetries,
        registeredEpoch: () => connection.connectedEpoch(),
        expiredJobs: () => expiredJobs,
      }),
      { host, port: config.getInt('shuffle-worker.metrics.port') },
      config,
      logger,
    );
    closers.push(() => metrics.close());
    const endpoints = ha.endpoints();
    await endpoints.publish({
      id: opts.id,
      role: 'shuffle-worker',
      address,
      metricsUrl: metrics.url,
      startedAtMs: clock.now(),
    });
    closers.push(() => endpoints.withdraw(opts.id).catch(() => undefined));
    connection.start();
    closers.push(() => connection.stop());
    expiry.start();
    closers.push(async () => {
      expiry.stop();
      await sweeping;
    });
    health.setStatus(HealthServices.server, 'SERVING');
    logger.info(
      { address, dataDir: opts.dataDir, metricsUrl: metrics.url, ...worker.usage() },
      'shuffle worker started',
    );

    return {
      id: opts.id,
      address,
      close: async () => {
        await closeAll();
        logger.info('shuffle worker stopped');
      },
    };
  } catch (err) {
    await closeAll();
    throw err;
  }
}
