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
import type { LeaderInfo, LeaderRetrieval } from '@rebound/ha';

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

interface Connection {
  /** Epoch raised to the one the JobMaster answered a registration with, when newer. */
  leader: LeaderInfo;
  readonly client: JobMasterGatewayClient;
  /** Aborted when the connection is dropped: cancels its registration or heartbeat in flight. */
  readonly dropped: AbortController;
  registered: boolean;
  lastAckMs: number;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
}

/**
 * The TaskManager's link to the leading JobMaster (Flink's JobLeaderService + heartbeat manager):
 * follows leader.json, registers, heartbeats, detects the loss of the JobMaster, and keeps
 * trying to register with whichever JobMaster leads.
 */
export class JobLeaderService {
  private readonly retrieval: LeaderRetrieval;
  private conn: Connection | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private readonly rpcTimeoutMs: number;
  private readonly pollMs: number;
  private readonly security: ClusterSecurity;

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
    private readonly listener: JobLeaderListener,
  ) {
    this.retrieval = opts.retrieval;
    this.rpcTimeoutMs = opts.config.getDurationMs('rpc.timeout');
    this.pollMs = opts.config.getDurationMs('high-availability.lease.poll-interval');
    this.security = ClusterSecurity.of(opts.config);
  }

  start(): void {
    this.retrieval.start({ onLeaderChange: () => this.onLeaderChange() });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.retrieval.stop();
    this.wake?.();
    await this.loop;
    this.conn?.client.close();
  }

  /**
   * A newer leader is dropped to at once: a heartbeat in flight to a paused old leader would
   * otherwise hold the switch until its deadline.
   */
  private onLeaderChange(): void {
    const leader = this.retrieval.current();
    if (leader && this.conn && this.conn.leader.epoch < leader.epoch)
      this.dropConnection(`a new leader was elected (epoch ${leader.epoch})`);
    this.wake?.();
  }

  /** Failed registration attempts since start (each is retried); for metrics. */
  registrationRetries = 0;

  /** The epoch of the leader we are registered with. */
  connectedEpoch(): number | undefined {
    return this.conn?.registered ? this.conn.leader.epoch : undefined;
  }

  private async pause(ms: number): Promise<void> {
    const ac = new AbortController();
    this.wake = () => ac.abort();
    await sleep(ms, ac.signal);
    this.wake = undefined;
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.step();
      } catch (err) {
        this.opts.logger.warn({ err: errorMessage(err) }, 'JobMaster connection step failed');
      }
      if (this.stopped) break;
      await this.pause(this.conn?.registered ? this.conn.heartbeatIntervalMs : this.pollMs);
    }
  }

  private async step(): Promise<void> {
    const leader = this.retrieval.current();
    if (!leader) return;
    const conn = this.conn;
    if (conn && conn.leader.epoch < leader.epoch) {
      this.dropConnection(`a new leader was elected (epoch ${leader.epoch})`);
    } else if (conn && conn.leader.address !== leader.address && conn.leader.epoch === leader.epoch) {
      this.dropConnection('the leader moved');
    }
    if (!this.conn) {
      this.listener.onLeaderElected(leader.epoch);
      const Ctor = loadProto().JobMasterGateway;
      this.conn = {
        leader,
        client: new Ctor(
          leader.address,
          this.security.channelCredentials(),
          this.security.channelOptions(CHANNEL_OPTIONS),
        ),
        dropped: new AbortController(),
        registered: false,
        lastAckMs: this.opts.clock.now(),
        heartbeatIntervalMs: this.opts.config.getDurationMs('heartbeat.interval'),
        heartbeatTimeoutMs: this.opts.config.getDurationMs('heartbeat.timeout'),
      };
    }
    const c = this.conn;
    if (!c.registered) {
      try {
        const res = await unary(
          c.client,
          c.client.RegisterTaskManager,
          {
            task_manager_id: this.opts.taskManagerId,
            address: this.opts.address,
            slots: this.opts.slots,
            epoch: c.leader.epoch,
            jobs_with_retained_partitions: this.opts.retainedJobs(),
            session_id: this.opts.sessionId,
          },
          this.rpcTimeoutMs,
          c.dropped.signal,
        );
        if (this.conn !== c) return;
        // The leader record this TaskManager followed may lag the JobMaster that answered at its
        // address (etcd's watch reconnects with a backoff after an outage, while the same JobMaster
        // was elected again). Registered under the newer epoch, it must not take the record's
        // later catching up for a change of leader, drop a healthy registration and have the
        // JobMaster treat its return as a new TaskManager. The fence is not raised here: a
        // deployment of that epoch is still confirmed with the HA services.
        if (res.epoch > c.leader.epoch) c.leader = { ...c.leader, epoch: res.epoch };
        c.registered = true;
        c.lastAckMs = this.opts.clock.now();
        c.heartbeatIntervalMs = res.heartbeat_interval_ms;
        c.heartbeatTimeoutMs = res.heartbeat_timeout_ms;
        this.opts.logger.info({ epoch: res.epoch, jobmaster: res.jobmaster_id }, 'registered with the JobMaster');
        this.listener.onJobMasterConnected(c.leader.epoch);
      } catch (err) {
        this.registrationRetries++;
        this.opts.logger.debug({ err: errorMessage(err) }, 'registration failed; will retry');
      }
      return;
    }
    try {
      const res = await unary(
        c.client,
        c.client.Heartbeat,
        {
          task_manager_id: this.opts.taskManagerId,
          epoch: c.leader.epoch,
          running: this.opts.running(),
          session_id: this.opts.sessionId,
        },
        Math.min(this.rpcTimeoutMs, c.heartbeatTimeoutMs),
        c.dropped.signal,
      );
      if (this.conn !== c) return;
      c.lastAckMs = this.opts.clock.now();
      if (!res.registered) this.dropConnection('the JobMaster no longer knows this TaskManager');
    } catch (err) {
      if (this.conn !== c) return;
      const silence = this.opts.clock.now() - c.lastAckMs;
      if (silence > c.heartbeatTimeoutMs)
        this.dropConnection(`no heartbeat answer for ${silence} ms: ${errorMessage(err)}`);
    }
  }

  private dropConnection(reason: string): void {
    const c = this.conn;
    if (!c) return;
    this.conn = undefined;
    c.dropped.abort();
    c.client.close();
    if (c.registered) {
      this.opts.logger.warn({ epoch: c.leader.epoch, reason }, 'lost the JobMaster');
      this.listener.onJobMasterLost(c.leader.epoch, reason);
    }
  }

  /** Reports a task's state to the JobMaster that deployed it; dropped if that one is gone. */
  async reportTaskState(update: TaskExecutionState & { epoch: number }): Promise<void> {
    for (;;) {
      const c = this.conn;
      if (!c || !c.registered || c.leader.epoch !== update.epoch) {
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
        if (this.stopped) return;
        this.opts.logger.debug({ err: errorMessage(err) }, 'task update failed; retrying');
        await sleep(Math.min(1000, c.heartbeatIntervalMs));
      }
    }
  }

  async requestSplit(req: SplitRequest & { epoch: number }): Promise<SplitResponse__Output> {
    const c = this.conn;
    if (!c || !c.registered || c.leader.epoch !== req.epoch) {
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
    const c = this.conn;
    if (!c || !c.registered || c.leader.epoch !== req.epoch) {
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
    const c = this.conn;
    if (!c || !c.registered) throw new UnavailableError('not connected to a JobMaster');
    const res = await unary(
      c.client,
      c.client.FetchJobArtifact,
      { job_id: jobId, epoch, task_manager_id: this.opts.taskManagerId, session_id: this.opts.sessionId },
      Math.max(this.rpcTimeoutMs, 30_000),
    );
    return { bytes: res.module_bundle, digest: res.digest };
  }
}
