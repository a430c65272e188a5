import {
  CHANNEL_OPTIONS,
  ClusterSecurity,
  errorMessage,
  loadProto,
  sleep,
  unary,
  UnavailableError,
} from '@rebound/core';
import type {
  Clock,
  Configuration,
  CoordinationRequest,
  CoordinationResponse__Output,
  JobMasterGatewayClient,
  Logger,
  SplitRequest,
  SplitResponse__Output,
  TaskExecutionState,
} from '@rebound/core';
import { LeaderLink, leaderLinkTimings, type LeaderConnection, type LeaderRetrieval } from '@rebound/ha';

export interface JobLeaderListener {
  /**
   * leader.json names a leader of `epoch`, and this TaskManager is about to register with it.
   * Epochs are allocated once, in increasing order: every older leader is deposed from now on.
   */
  onLeaderElected(epoch: number): void;
  /** Registered with the leader of `epoch`. */
  onJobMasterConnected(epoch: number): void;
  /** The JobMaster we were registered with is gone (heartbeat timeout or a new leader). */
  onJobMasterLost(epoch: number, reason: string): void;
}

/**
 * The TaskManager's link to the leading JobMaster (Flink's JobLeaderService + heartbeat manager):
 * the generic LeaderLink of @rebound/ha speaking JobMasterGateway, and the calls a running task
 * makes to the JobMaster that deployed it.
 */
export class JobLeaderService {
  private readonly link: LeaderLink<JobMasterGatewayClient>;
  private readonly rpcTimeoutMs: number;

  constructor(
    private readonly opts: {
      /** How the leader is followed: HighAvailabilityServices.createLeaderRetrievalService, whatever the backend. */
      retrieval: LeaderRetrieval;
      taskManagerId: string;
      /** This process's session secret: bound to taskManagerId at registration, carried by every later call. */
      sessionId: string;
      address: string;
      slots: number;
      config: Configuration;
      logger: Logger;
      clock: Clock;
      running: () => { job_id: string; vertex_id: string; subtask: number; attempt: number }[];
      retainedJobs: () => string[];
    },
    listener: JobLeaderListener,
  ) {
    this.rpcTimeoutMs = opts.config.getDurationMs('rpc.timeout');
    const security = ClusterSecurity.of(opts.config);
    this.link = new LeaderLink<JobMasterGatewayClient>(
      {
        retrieval: opts.retrieval,
        logger: opts.logger,
        clock: opts.clock,
        ...leaderLinkTimings(opts.config),
        member: 'TaskManager',
      },
      {
        connect: (leader) => {
          const Ctor = loadProto().JobMasterGateway;
          return new Ctor(leader.address, security.channelCredentials(), security.channelOptions(CHANNEL_OPTIONS));
        },
        close: (client) => client.close(),
        register: async (client, leader, timeoutMs, signal) => {
          const res = await unary(
            client,
            client.RegisterTaskManager,
            {
              task_manager_id: opts.taskManagerId,
              address: opts.address,
              slots: opts.slots,
              epoch: leader.epoch,
              jobs_with_retained_partitions: opts.retainedJobs(),
              session_id: opts.sessionId,
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
        heartbeat: (client, leader, timeoutMs, signal) =>
          unary(
            client,
            client.Heartbeat,
            {
              task_manager_id: opts.taskManagerId,
              epoch: leader.epoch,
              running: opts.running(),
              session_id: opts.sessionId,
            },
            timeoutMs,
            signal,
          ),
      },
      {
        onLeaderElected: (epoch) => listener.onLeaderElected(epoch),
        onConnected: (epoch) => listener.onJobMasterConnected(epoch),
        onLost: (epoch, reason) => listener.onJobMasterLost(epoch, reason),
      },
    );
  }

  start(): void {
    this.link.start();
  }

  stop(): Promise<void> {
    return this.link.stop();
  }

  /** Failed registration attempts since start (each is retried); for metrics. */
  get registrationRetries(): number {
    return this.link.registrationRetries;
  }

  /** The epoch of the leader we are registered with. */
  connectedEpoch(): number | undefined {
    return this.link.connectedEpoch();
  }

  /** The connection to the JobMaster of `epoch`, when registered with it. */
  private registeredWith(epoch?: number): LeaderConnection<JobMasterGatewayClient> | undefined {
    const c = this.link.connection();
    if (!c || !c.registered || (epoch !== undefined && c.leader.epoch !== epoch)) return undefined;
    return c;
  }

  /** Reports a task's state to the JobMaster that deployed it; dropped if that one is gone. */
  async reportTaskState(update: TaskExecutionState & { epoch: number }): Promise<void> {
    for (;;) {
      const c = this.registeredWith(update.epoch);
      if (!c) {
        this.opts.logger.info(
          { execution: update.execution, state: update.state },
          'dropping a task update: its JobMaster is gone',
        );
        return;
      }
      try {
        await unary(
          c.client,
          c.client.UpdateTaskExecutionState,
          { ...update, session_id: this.opts.sessionId },
          this.rpcTimeoutMs,
        );
        return;
      } catch (err) {
        if (this.link.isStopped) return;
        this.opts.logger.debug({ err: errorMessage(err) }, 'task update failed; retrying');
        await sleep(Math.min(1000, c.heartbeatIntervalMs));
      }
    }
  }

  async requestSplit(req: SplitRequest & { epoch: number }): Promise<SplitResponse__Output> {
    const c = this.registeredWith(req.epoch);
    if (!c) {
      throw new UnavailableError('the JobMaster that deployed this task is gone');
    }
    return unary(
      c.client,
      c.client.RequestSplit,
      { ...req, task_manager_id: this.opts.taskManagerId, session_id: this.opts.sessionId },
      this.rpcTimeoutMs,
    );
  }

  async sendCoordinationRequest(req: CoordinationRequest & { epoch: number }): Promise<CoordinationResponse__Output> {
    const c = this.registeredWith(req.epoch);
    if (!c) {
      throw new UnavailableError('the JobMaster that deployed this task is gone');
    }
    return unary(
      c.client,
      c.client.SendCoordinationRequest,
      { ...req, task_manager_id: this.opts.taskManagerId, session_id: this.opts.sessionId },
      this.rpcTimeoutMs,
    );
  }

  async fetchArtifact(jobId: string, epoch: number): Promise<{ bytes: Uint8Array; digest: string }> {
    const c = this.registeredWith();
    if (!c) throw new UnavailableError('not connected to a JobMaster');
    const res = await unary(
      c.client,
      c.client.FetchJobArtifact,
      { job_id: jobId, epoch, task_manager_id: this.opts.taskManagerId, session_id: this.opts.sessionId },
      Math.max(this.rpcTimeoutMs, 30_000),
    );
    return { bytes: res.module_bundle, digest: res.digest };
  }
}
