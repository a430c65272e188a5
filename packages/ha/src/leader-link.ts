import { errorMessage, sleep, type Clock, type Configuration, type Logger } from '@rebound/core';
import type { LeaderRetrieval } from './ha-services.js';
import type { LeaderInfo } from './leader-info.js';

/** What a leader answered a registration with. */
export interface LeaderRegistration {
  /** The epoch the leader registered us under (may be newer than the record we followed). */
  readonly epoch: number;
  readonly heartbeatIntervalMs: number;
  readonly heartbeatTimeoutMs: number;
  /** Logged with the registration (the leader's id, say). */
  readonly detail?: Readonly<Record<string, unknown>>;
}

/**
 * The calls a member of the cluster makes to the leader it follows; the RPCs differ between a
 * TaskManager (JobMasterGateway) and a shuffle worker (ShuffleMasterGateway), the loop does not.
 * Every call must honour its deadline and `signal` (aborted when the connection is dropped).
 */
export interface LeaderLinkProtocol<C> {
  /** A client for the leader at `leader.address`. */
  connect(leader: LeaderInfo): C;
  close(client: C): void;
  register(client: C, leader: LeaderInfo, timeoutMs: number, signal: AbortSignal): Promise<LeaderRegistration>;
  /** `registered: false`: the leader does not know us (it restarted its registry); register again. */
  heartbeat(client: C, leader: LeaderInfo, timeoutMs: number, signal: AbortSignal): Promise<{ registered: boolean }>;
}

export interface LeaderLinkListener {
  /**
   * The leader record names a leader of `epoch`, and we are about to register with it. Epochs
   * are allocated once, in increasing order: every older leader is deposed from now on.
   */
  onLeaderElected(epoch: number): void;
  /** Registered with the leader of `epoch`. */
  onConnected(epoch: number): void;
  /** The leader we were registered with is gone (heartbeat timeout, a new leader, or it forgot us). */
  onLost(epoch: number, reason: string): void;
}

export interface LeaderLinkOptions {
  /** How the leader is followed: HighAvailabilityServices.createLeaderRetrievalService, whatever the backend. */
  readonly retrieval: LeaderRetrieval;
  readonly logger: Logger;
  readonly clock: Clock;
  /** Deadline of a registration (`rpc.timeout`); a heartbeat's is also capped by the heartbeat timeout. */
  readonly rpcTimeoutMs: number;
  /** Pause between registration attempts (`high-availability.lease.poll-interval`). */
  readonly retryMs: number;
  /** Heartbeat timings until a leader answers a registration with its own. */
  readonly heartbeatIntervalMs: number;
  readonly heartbeatTimeoutMs: number;
  /** Who we are, for log lines: "TaskManager", "shuffle worker". */
  readonly member: string;
}

/** The link's deadlines and pauses, from the keys every cluster member follows its leader by. */
export function leaderLinkTimings(
  config: Configuration,
): Pick<LeaderLinkOptions, 'rpcTimeoutMs' | 'retryMs' | 'heartbeatIntervalMs' | 'heartbeatTimeoutMs'> {
  return {
    rpcTimeoutMs: config.getDurationMs('rpc.timeout'),
    retryMs: config.getDurationMs('high-availability.lease.poll-interval'),
    heartbeatIntervalMs: config.getDurationMs('heartbeat.interval'),
    heartbeatTimeoutMs: config.getDurationMs('heartbeat.timeout'),
  };
}

/** The connection to one leader, as the owner of the link sees it. */
export interface LeaderConnection<C> {
  /** Epoch raised to the one the leader answered a registration with, when newer. */
  readonly leader: LeaderInfo;
  readonly client: C;
  readonly registered: boolean;
  readonly heartbeatIntervalMs: number;
}

interface Connection<C> {
  leader: LeaderInfo;
  readonly client: C;
  /** Aborted when the connection is dropped: cancels its registration or heartbeat in flight. */
  readonly dropped: AbortController;
  registered: boolean;
  lastAckMs: number;
  heartbeatIntervalMs: number;
  heartbeatTimeoutMs: number;
}

/**
 * A cluster member's link to the leading JobMaster (Flink's JobLeaderService and heartbeat
 * manager, for any member): follows the leader record, registers, sends heartbeats, detects the
 * loss of the leader, and keeps trying to register with whichever JobMaster leads, until stop().
 */
export class LeaderLink<C> {
  private conn: Connection<C> | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  /** Failed registration attempts since start (each is retried); for metrics. */
  registrationRetries = 0;

  constructor(
    private readonly opts: LeaderLinkOptions,
    private readonly protocol: LeaderLinkProtocol<C>,
    private readonly listener: LeaderLinkListener,
  ) {}

  start(): void {
    this.opts.retrieval.start({ onLeaderChange: () => this.onLeaderChange() });
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.opts.retrieval.stop();
    this.wake?.();
    await this.loop;
    if (this.conn) this.protocol.close(this.conn.client);
  }

  /** The epoch of the leader we are registered with. */
  connectedEpoch(): number | undefined {
    return this.conn?.registered ? this.conn.leader.epoch : undefined;
  }

  /** The current connection (registered or still registering), if a leader is known. */
  connection(): LeaderConnection<C> | undefined {
    return this.conn;
  }

  /** Whether the loop has been stopped (calls on its behalf should give up). */
  get isStopped(): boolean {
    return this.stopped;
  }

  /**
   * A newer leader is dropped to at once: a heartbeat in flight to a paused old leader would
   * otherwise hold the switch until its deadline.
   */
  private onLeaderChange(): void {
    const leader = this.opts.retrieval.current();
    if (leader && this.conn && this.conn.leader.epoch < leader.epoch)
      this.dropConnection(`a new leader was elected (epoch ${leader.epoch})`);
    this.wake?.();
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
      await this.pause(this.conn?.registered ? this.conn.heartbeatIntervalMs : this.opts.retryMs);
    }
  }

  private async step(): Promise<void> {
    const leader = this.opts.retrieval.current();
    if (!leader) return;
    const conn = this.conn;
    if (conn && conn.leader.epoch < leader.epoch) {
      this.dropConnection(`a new leader was elected (epoch ${leader.epoch})`);
    } else if (conn && conn.leader.address !== leader.address && conn.leader.epoch === leader.epoch) {
      this.dropConnection('the leader moved');
    }
    if (!this.conn) {
      this.listener.onLeaderElected(leader.epoch);
      this.conn = {
        leader,
        client: this.protocol.connect(leader),
        dropped: new AbortController(),
        registered: false,
        lastAckMs: this.opts.clock.now(),
        heartbeatIntervalMs: this.opts.heartbeatIntervalMs,
        heartbeatTimeoutMs: this.opts.heartbeatTimeoutMs,
      };
    }
    const c = this.conn;
    if (!c.registered) {
      try {
        const res = await this.protocol.register(c.client, c.leader, this.opts.rpcTimeoutMs, c.dropped.signal);
        if (this.conn !== c) return;
        // The leader record this member followed may lag the JobMaster that answered at its
        // address (etcd's watch reconnects with a backoff after an outage, while the same JobMaster
        // was elected again). Registered under the newer epoch, it must not take the record's
        // later catching up for a change of leader, drop a healthy registration and have the
        // JobMaster treat its return as a new member. No fence is raised here: a call of that
        // epoch is still confirmed with the HA services.
        if (res.epoch > c.leader.epoch) c.leader = { ...c.leader, epoch: res.epoch };
        c.registered = true;
        c.lastAckMs = this.opts.clock.now();
        c.heartbeatIntervalMs = res.heartbeatIntervalMs;
        c.heartbeatTimeoutMs = res.heartbeatTimeoutMs;
        this.opts.logger.info({ epoch: res.epoch, ...res.detail }, 'registered with the JobMaster');
        this.listener.onConnected(c.leader.epoch);
      } catch (err) {
        this.registrationRetries++;
        this.opts.logger.debug({ err: errorMessage(err) }, 'registration failed; will retry');
      }
      return;
    }
    try {
      const res = await this.protocol.heartbeat(
        c.client,
        c.leader,
        Math.min(this.opts.rpcTimeoutMs, c.heartbeatTimeoutMs),
        c.dropped.signal,
      );
      if (this.conn !== c) return;
      c.lastAckMs = this.opts.clock.now();
      if (!res.registered) this.dropConnection(`the JobMaster no longer knows this ${this.opts.member}`);
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
    this.protocol.close(c.client);
    if (c.registered) {
      this.opts.logger.warn({ epoch: c.leader.epoch, reason }, 'lost the JobMaster');
      this.listener.onLost(c.leader.epoch, reason);
    }
  }
}
