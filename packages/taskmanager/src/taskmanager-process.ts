import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  ClusterSecurity,
  HealthServices,
  HealthStatusManager,
  bindServer,
  loadHealthProto,
  loadProto,
  newSessionSecret,
  shutdownServer,
  systemClock,
} from '@rebound/core';
import type { Clock, Configuration, Logger } from '@rebound/core';
import { EpochFence, createHaServices, type HighAvailabilityServices } from '@rebound/ha';
import { JobLeaderService } from './job-leader-service.js';
import { createTaskManagerRegistry, startMetricsServer } from './metrics-server.js';
import { ModuleCache } from './module-cache.js';
import { PartitionStore, createPartitionServiceHandlers } from '@rebound/partition';
import { ReadCapabilities } from './read-capabilities.js';
import { TaskExecutor } from './task-executor.js';

export interface TaskManagerProcess {
  readonly id: string;
  readonly address: string;
  close(): Promise<void>;
}

export interface TaskManagerProcessOptions {
  haDir: string;
  dataDir: string;
  slots: number;
  config: Configuration;
  id: string;
  logger: Logger;
  clock?: Clock;
  /** The HA services to use; by default created from `config` (`high-availability.type`) and closed with the process. */
  ha?: HighAvailabilityServices;
}

/** A TaskManager process: TaskExecutorGateway and PartitionService on one gRPC server. */
export async function startTaskManagerProcess(opts: TaskManagerProcessOptions): Promise<TaskManagerProcess> {
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger.child({ component: 'TaskExecutor', taskManagerId: opts.id });
  const store = await PartitionStore.open({
    dataDir: opts.dataDir,
    ...PartitionStore.optionsFromConfig(opts.config),
    logger: opts.logger,
    clock: () => clock.now(),
  });
  const ha = opts.ha ?? createHaServices(opts.config, opts.haDir);
  const ownsHa = opts.ha === undefined;
  const fence = new EpochFence(ha.leaderEpochSource());
  // One session per process: a restarted TaskManager is a new party (its partitions are gone too).
  const session = newSessionSecret();
  const readCapabilities = new ReadCapabilities(logger);
  const executor = new TaskExecutor(
    opts.id,
    opts.slots,
    store,
    new ModuleCache(join(opts.dataDir, 'modules')),
    opts.config,
    logger,
    clock,
    fence,
    session,
    readCapabilities,
  );

  // "" is the process; the TaskExecutorGateway name reads SERVING only while a leader has it registered.
  const health = new HealthStatusManager(
    {
      [HealthServices.server]: 'NOT_SERVING',
      [HealthServices.taskExecutor]: 'NOT_SERVING',
    },
    { maxWatchStreams: opts.config.getInt('rpc.health.watch.max-streams') },
  );
  const proto = loadProto();
  const security = ClusterSecurity.of(opts.config);
  const server = new grpc.Server(security.serverOptions({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 }));
  server.addService(proto.TaskExecutorGateway.service, executor.handlers());
  server.addService(
    proto.PartitionService.service,
    createPartitionServiceHandlers(store, opts.logger, {
      checkReadCapability: (jobId, capability, partition) => readCapabilities.check(jobId, capability, partition),
    }),
  );
  server.addService(loadHealthProto().Health.service, health.handlers());
  const host = opts.config.getString('taskmanager.bind-host');
  const port = await bindServer(server, host, opts.config.getInt('taskmanager.port'), security.serverCredentials());
  const address = `${opts.config.getString('taskmanager.host') || host}:${port}`;

  const jobLeader = new JobLeaderService(
    {
      retrieval: ha.createLeaderRetrievalService(
        opts.logger.child({ component: 'JobLeaderService', taskManagerId: opts.id }),
      ),
      taskManagerId: opts.id,
      sessionId: session,
      address,
      slots: opts.slots,
      config: opts.config,
      logger: opts.logger.child({ component: 'JobLeaderService', taskManagerId: opts.id }),
      clock,
      running: () => executor.runningAttempts(),
      retainedJobs: () => executor.retainedJobs(),
    },
    {
      onLeaderElected: (epoch) => executor.onLeaderElected(epoch),
      onJobMasterConnected: (epoch) => {
        health.setStatus(HealthServices.taskExecutor, 'SERVING');
        executor.onJobMasterConnected(epoch);
      },
      onJobMasterLost: (epoch, reason) => {
        health.setStatus(HealthServices.taskExecutor, 'NOT_SERVING');
        executor.onJobMasterLost(epoch, reason);
      },
    },
  );
  executor.attach(jobLeader);
  let metrics;
  try {
    metrics = await startMetricsServer(
      createTaskManagerRegistry({
        id: opts.id,
        store,
        slotUsage: () => executor.slotUsage(),
        registrationRetries: () => jobLeader.registrationRetries,
        registeredEpoch: () => jobLeader.connectedEpoch(),
      }),
      opts.config,
      logger,
    );
  } catch (err) {
    await shutdownServer(server);
    await store.close();
    if (ownsHa) await ha.close();
    throw err;
  }
  const metricsServer = metrics;
  const endpoints = ha.endpoints();
  await endpoints.publish({
    id: opts.id,
    role: 'taskmanager',
    address,
    metricsUrl: metricsServer.url,
    startedAtMs: clock.now(),
  });
  jobLeader.start();
  health.setStatus(HealthServices.server, 'SERVING');
  logger.info(
    { address, slots: opts.slots, dataDir: opts.dataDir, metricsUrl: metricsServer.url },
    'TaskManager started',
  );

  return {
    id: opts.id,
    address,
    close: async () => {
      health.shutdown();
      await jobLeader.stop();
      await executor.close();
      await metricsServer.close();
      await endpoints.withdraw(opts.id).catch(() => undefined);
      await shutdownServer(server);
      await store.close();
      if (ownsHa) await ha.close();
      logger.info('TaskManager stopped');
    },
  };
}
