import * as grpc from '@grpc/grpc-js';
import {
  ClusterSecurity,
  HealthServices,
  HealthStatusManager,
  NotLeaderError,
  bindServer,
  errorMessage,
  handleUnary,
  loadHealthProto,
  loadProto,
  shutdownServer,
  systemClock,
} from '@rebound/core';
import type {
  Clock,
  Configuration,
  DispatcherHandlers,
  JobMasterGatewayHandlers,
  Logger,
  ShuffleMasterGatewayHandlers,
} from '@rebound/core';
import { createHaServices, type HighAvailabilityServices } from '@rebound/ha';
import { handleResultStream } from './dispatcher/result-stream.js';
import { UserCodeWorkers } from './user-code/user-code-workers.js';
import { LeaderServices } from './leader-services.js';
import { startRestServer } from './rest/index.js';

export interface JobMasterProcess {
  readonly id: string;
  readonly address: string;
  /** REST API, dashboard and /metrics, e.g. http://127.0.0.1:8081 */
  readonly restUrl: string;
  /** Current leader epoch, when this process leads. */
  leaderEpoch(): number | undefined;
  close(): Promise<void>;
}

export interface JobMasterProcessOptions {
  haDir: string;
  config: Configuration;
  id: string;
  logger: Logger;
  clock?: Clock;
  /** The HA services to use; by default created from `config` (`high-availability.type`) and closed with the process. */
  ha?: HighAvailabilityServices;
}

/**
 * A JobMaster process: one gRPC server (Dispatcher for clients, JobMasterGateway for
 * TaskManagers) that serves only while this process holds leadership.
 */
export async function startJobMasterProcess(opts: JobMasterProcessOptions): Promise<JobMasterProcess> {
  const { haDir, config, id } = opts;
  const clock = opts.clock ?? systemClock;
  const logger = opts.logger.child({ component: 'JobMasterProcess', jobmasterId: id });
  const ha = opts.ha ?? createHaServices(config, haDir);
  const ownsHa = opts.ha === undefined;
  let leader: LeaderServices | undefined;
  // Leadership changes are applied one after another, never interleaved.
  let transitions: Promise<void> = Promise.resolve();

  const requireLeader = (): LeaderServices => {
    if (!leader)
      throw new NotLeaderError(`JobMaster ${id} is not the leader; clients look the leader up again and retry`);
    return leader;
  };

  const dispatcher: DispatcherHandlers = {
    SubmitJob: handleUnary(async (req) => ({ job_id: await requireLeader().submit(req) }), logger),
    ListJobs: handleUnary(async () => ({ jobs: await requireLeader().list() }), logger),
    GetJobStatus: handleUnary(async (req) => requireLeader().status(req.job_id), logger),
    CancelJob: handleUnary(async (req) => ({ state: await requireLeader().cancel(req.job_id) }), logger),
    GetClusterOverview: handleUnary(async () => {
      const l = requireLeader();
      return { jobmaster_id: id, epoch: l.epoch, task_managers: l.registry.overview() };
    }, logger),
    FetchJobResult: handleResultStream(async (req) => requireLeader().resultChunks(req), logger),
  };

  const gateway: JobMasterGatewayHandlers = {
    RegisterTaskManager: handleUnary((req) => {
      const l = requireLeader();
      if (req.epoch > l.epoch)
        throw new NotLeaderError(`epoch ${l.epoch} is older than the epoch ${req.epoch} the TaskManager knows`);
      return l.registry.register(req);
    }, logger),
    Heartbeat: handleUnary((req) => requireLeader().registry.heartbeat(req), logger),
    UpdateTaskExecutionState: handleUnary((req) => {
      requireLeader().onTaskExecutionState(req);
      return { accepted: true };
    }, logger),
    RequestSplit: handleUnary((req) => requireLeader().requestSplit(req), logger),
    SendCoordinationRequest: handleUnary((req) => requireLeader().handleCoordinationRequest(req), logger),
    FetchJobArtifact: handleUnary(async (req) => {
      const { bytes, digest } = await requireLeader().fetchArtifact(req);
      return { module_bundle: bytes, digest };
    }, logger),
  };

  const shuffleGateway: ShuffleMasterGatewayHandlers = {
    RegisterShuffleWorker: handleUnary((req) => {
      const l = requireLeader();
      if (req.epoch > l.epoch)
        throw new NotLeaderError(`epoch ${l.epoch} is older than the epoch ${req.epoch} the shuffle worker knows`);
      return l.shuffleWorkers.register(req);
    }, logger),
    ShuffleWorkerHeartbeat: handleUnary((req) => requireLeader().shuffleWorkers.heartbeat(req), logger),
  };

  // A standby is a healthy process ("" SERVING) whose Dispatcher is not serving: probes that
  // ask for the Dispatcher find the leader, container healthchecks ask for the process.
  const health = new HealthStatusManager(
    {
      [HealthServices.server]: 'NOT_SERVING',
      [HealthServices.dispatcher]: 'NOT_SERVING',
    },
    { maxWatchStreams: config.getInt('rpc.health.watch.max-streams') },
  );
  const proto = loadProto();
  const security = ClusterSecurity.of(config);
  const server = new grpc.Server(security.serverOptions({ 'grpc.max_receive_message_length': 256 * 1024 * 1024 }));
  server.addService(proto.Dispatcher.service, dispatcher);
  server.addService(proto.JobMasterGateway.service, gateway);
  server.addService(proto.ShuffleMasterGateway.service, shuffleGateway);
  server.addService(loadHealthProto().Health.service, health.handlers());
  const host = config.getString('jobmaster.bind-host');
  const port = await bindServer(server, host, config.getInt('jobmaster.port'), security.serverCredentials());
  const address = `${config.getString('jobmaster.rpc.address') || host}:${port}`;

  const userCodeWorkers = new UserCodeWorkers();
  // Before the election: a leader is observable from its first moment, a standby from its start.
  let rest;
  try {
    rest = await startRestServer({ id, ha, config, logger: opts.logger, clock, leader: () => leader });
  } catch (err) {
    await shutdownServer(server);
    if (ownsHa) await ha.close();
    throw err;
  }
  const endpoints = ha.endpoints();
  await endpoints.publish({ id, role: 'jobmaster', address, restUrl: rest.url, startedAtMs: clock.now() });
  const restServer = rest;

  const election = ha.createLeaderElectionService({
    contenderId: id,
    address,
    logger: opts.logger.child({ component: 'LeaderElection' }),
    clock,
  });
  // `leader` serves; `granted` is the leadership to close. They differ between the moment a
  // leadership ends (its signal, at once) and the revocation that closes it (after its start-up).
  let granted: LeaderServices | undefined;
  await election.start({
    grantLeadership: (epoch, ended) => {
      transitions = transitions.then(async () => {
        if (ended.aborted) return;
        logger.info({ epoch, address }, 'granted leadership');
        const services = new LeaderServices({
          epoch,
          jobmasterId: id,
          address,
          ha,
          config,
          logger: opts.logger.child({ epoch }),
          clock,
          userCodeWorkers,
          previousLeaderLastHeardMs: election.previousLeaderLastHeardMs(),
          leadershipEnded: ended,
        });
        granted = services;
        leader = services;
        // Stops serving the moment the lease may be gone: clients and TaskManagers look the
        // leader up again instead of waiting for a start-up that can no longer commit anything.
        ended.addEventListener('abort', () => {
          if (leader !== services) return;
          leader = undefined;
          health.setStatus(HealthServices.dispatcher, 'NOT_SERVING');
          logger.warn({ epoch, reason: String(ended.reason) }, 'leadership ended; no longer serving');
        });
        try {
          await services.start();
          if (leader === services) health.setStatus(HealthServices.dispatcher, 'SERVING');
        } catch (err) {
          logger.error({ err: errorMessage(err) }, 'starting leader services failed');
        }
      });
      return transitions;
    },
    revokeLeadership: (reason) => {
      transitions = transitions.then(async () => {
        logger.warn({ reason }, 'leadership revoked');
        health.setStatus(HealthServices.dispatcher, 'NOT_SERVING');
        const old = granted;
        granted = undefined;
        leader = undefined;
        await old?.close();
      });
      return transitions;
    },
  });
  health.setStatus(HealthServices.server, 'SERVING');
  logger.info({ address, restUrl: restServer.url }, 'JobMaster started');

  return {
    id,
    address,
    restUrl: restServer.url,
    leaderEpoch: () => leader?.epoch,
    close: async () => {
      health.shutdown();
      await election.stop();
      await transitions;
      const l = granted;
      granted = undefined;
      leader = undefined;
      await l?.close();
      await restServer.close();
      await endpoints.withdraw(id).catch(() => undefined);
      await shutdownServer(server);
      if (ownsHa) await ha.close();
      logger.info('JobMaster stopped');
    },
  };
}
