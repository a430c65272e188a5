import {
  CHANNEL_OPTIONS,
  ClusterSecurity,
  HeartbeatTimeouts,
  PeriodicTask,
  PermissionDeniedError,
  errorMessage,
  loadProto,
  sameSecret,
  unary,
} from '@rebound/core';
import type {
  Clock,
  Configuration,
  HeartbeatResponse,
  Logger,
  RegisterTaskManagerRequest__Output,
  RegisterTaskManagerResponse,
  TaskManagerHeartbeat__Output,
  TaskManagerInfo,
} from '@rebound/core';
import type { TaskExecutorGatewayClient } from '@rebound/core';

export interface RegisteredTaskManager {
  readonly id: string;
  readonly address: string;
  readonly slots: number;
  freeSlots: number;
  lastHeartbeatMs: number;
  readonly registeredAtMs: number;
  readonly client: TaskExecutorGatewayClient;
  /** The session secret the TaskManager registered with; every call to or from it carries it. */
  readonly session: string;
}

export interface TaskManagerRegistryListener {
  onTaskManagerRegistered(tm: RegisteredTaskManager, jobsWithRetainedPartitions: readonly string[]): void;
  /**
   * `keptPartitionsOf`: jobs whose finished partitions the TaskManager still holds, when the same
   * process (same session) registered again; their finished work there is not lost.
   */
  onTaskManagerLost(tmId: string, reason: string, keptPartitionsOf?: ReadonlySet<string>): void;
}

/**
 * The leader's view of the TaskManagers: registration, heartbeat monitoring, slot accounting
 * and the typed clients every JobMaster→TaskManager call goes through.
 */
export class TaskManagerRegistry {
  private readonly tms = new Map<string, RegisteredTaskManager>();
  private readonly monitor: PeriodicTask;
  private readonly timeouts: HeartbeatTimeouts;
  private readonly heartbeatIntervalMs: number;
  private readonly heartbeatTimeoutMs: number;
  readonly rpcTimeoutMs: number;
  private readonly security: ClusterSecurity;

  constructor(
    readonly epoch: number,
    readonly jobmasterId: string,
    config: Configuration,
    private readonly listener: TaskManagerRegistryListener,
    private readonly logger: Logger,
    private readonly clock: Clock,
  ) {
    this.heartbeatIntervalMs = config.getDurationMs('heartbeat.interval');
    this.heartbeatTimeoutMs = config.getDurationMs('heartbeat.timeout');
    this.rpcTimeoutMs = config.getDurationMs('rpc.timeout');
    this.security = ClusterSecurity.of(config);
    const checkIntervalMs = Math.max(20, Math.min(this.heartbeatIntervalMs, this.heartbeatTimeoutMs / 4));
    this.timeouts = new HeartbeatTimeouts({
      timeoutMs: this.heartbeatTimeoutMs,
      checkIntervalMs,
      clock: this.clock,
      logger: this.logger,
    });
    this.monitor = new PeriodicTask(checkIntervalMs, () => this.checkHeartbeats());
  }

  start(): void {
    this.monitor.start();
  }

  close(): void {
    this.monitor.stop();
    for (const tm of this.tms.values()) tm.client.close();
    this.tms.clear();
  }

  /**
   * Registers a TaskManager under the session it presents. An id registered with another session
   * is taken over only when its TaskManager is gone: silent for the heartbeat timeout, or no longer
   * answering HeartbeatFromJobManager with its session (it was restarted, a new process with a new
   * session, or cannot be reached). Otherwise the registration is refused: another party claims
   * the id of a live TaskManager, and evicting it would fail its tasks and drop its partitions.
   * Synchronous unless such a check is needed.
   */
  async register(req: RegisterTaskManagerRequest__Output): Promise<RegisterTaskManagerResponse> {
    if (!req.task_manager_id) throw new PermissionDeniedError('registration without a TaskManager id refused');
    if (!req.session_id)
      throw new PermissionDeniedError(`registration of ${req.task_manager_id} without a session refused`);
    const existing = this.tms.get(req.task_manager_id);
    if (existing && !sameSecret(existing.session, req.session_id)) {
      const silentMs = this.clock.now() - existing.lastHeartbeatMs;
      if (silentMs <= this.heartbeatTimeoutMs && (await this.answersWithItsSession(existing))) {
        this.logger.warn(
          {
            event: 'session.reject',
            method: 'RegisterTaskManager',
            taskManagerId: req.task_manager_id,
            address: req.address,
          },
          'refused a registration under the id of a live TaskManager',
        );
        throw new PermissionDeniedError(
          `TaskManager ${req.task_manager_id} is registered and alive with another session; registration refused`,
        );
      }
      if (this.tms.get(req.task_manager_id) !== existing) {
        // Another registration of the id got in while we asked; the TaskManager retries.
        throw new PermissionDeniedError(
          `TaskManager ${req.task_manager_id} registered concurrently; registration refused`,
        );
      }
    }
    if (existing && sameSecret(existing.session, req.session_id)) {
      // The same process registers again: it lost us (or dropped our answer to its registration
      // when its leader record caught up, chaos etcd seed 5). Its running tasks are failed over;
      // the finished partitions it retained are still there, and stay in use.
      this.remove(existing.id, 'registered again', new Set(req.jobs_with_retained_partitions));
    } else if (existing) {
      // A restarted TaskManager: a new process, which wiped its partitions.
      this.remove(existing.id, 'registered again as a new process');
    }
    const Ctor = loadProto().TaskExecutorGateway;
    const now = this.clock.now();
    const tm: RegisteredTaskManager = {
      id: req.task_manager_id,
      address: req.address,
      slots: req.slots,
      freeSlots: req.slots,
      lastHeartbeatMs: now,
      registeredAtMs: now,
      client: new Ctor(req.address, this.security.channelCredentials(), this.security.channelOptions(CHANNEL_OPTIONS)),
      session: req.session_id,
    };
    this.tms.set(tm.id, tm);
    this.logger.info({ taskManagerId: tm.id, address: tm.address, slots: tm.slots }, 'TaskManager registered');
    this.listener.onTaskManagerRegistered(tm, req.jobs_with_retained_partitions);
    return {
      epoch: this.epoch,
      jobmaster_id: this.jobmasterId,
      heartbeat_interval_ms: this.heartbeatIntervalMs,
      heartbeat_timeout_ms: this.heartbeatTimeoutMs,
    };
  }

  /** Whether `tm` is still the process that registered: it answers with its session in time. */
  private async answersWithItsSession(tm: RegisteredTaskManager): Promise<boolean> {
    try {
      await unary(
        tm.client,
        tm.client.HeartbeatFromJobManager,
        { epoch: this.epoch, session_id: tm.session },
        Math.min(this.rpcTimeoutMs, this.heartbeatTimeoutMs),
      );
      return true;
    } catch (err) {
      this.logger.info(
        { taskManagerId: tm.id, address: tm.address, err: errorMessage(err) },
        'a registered TaskManager no longer answers with its session; its id is free',
      );
      return false;
    }
  }

  heartbeat(hb: TaskManagerHeartbeat__Output): HeartbeatResponse {
    const tm = this.tms.get(hb.task_manager_id);
    if (!tm) return { registered: false, epoch: this.epoch };
    // A forged heartbeat must not keep a dead TaskManager's slots and partitions alive.
    this.authenticate(hb.task_manager_id, hb.session_id, 'Heartbeat');
    tm.lastHeartbeatMs = this.clock.now();
    return { registered: true, epoch: this.epoch };
  }

  private checkHeartbeats(): void {
    for (const { peer, silentMs } of this.timeouts.expired(this.tms.values()))
      this.remove(peer.id, `no heartbeat for ${silentMs} ms`);
  }

  /** Forgets a TaskManager and fails over what ran on it (all of it unless `keptPartitionsOf`). */
  remove(tmId: string, reason: string, keptPartitionsOf?: ReadonlySet<string>): void {
    const tm = this.tms.get(tmId);
    if (!tm) return;
    this.tms.delete(tmId);
    tm.client.close();
    this.logger.warn({ taskManagerId: tmId, reason }, 'TaskManager lost');
    this.listener.onTaskManagerLost(tmId, reason, keptPartitionsOf);
  }

  /**
   * The registered TaskManager `tmId`, if `session` is the one it registered with; otherwise the
   * call is refused (PERMISSION_DENIED) and logged. Nothing is changed either way.
   */
  authenticate(tmId: string, session: string, method: string): RegisteredTaskManager {
    const tm = this.tms.get(tmId);
    if (!tm || !sameSecret(tm.session, session)) {
      this.logger.warn(
        { event: 'session.reject', method, taskManagerId: tmId, registered: tm !== undefined },
        'refused a call without the session of the TaskManager it names',
      );
      throw new PermissionDeniedError(
        `${method} refused: ${tm ? `the call does not carry the session of TaskManager ${tmId}` : `no TaskManager ${tmId} is registered`}`,
      );
    }
    return tm;
  }

  get(tmId: string): RegisteredTaskManager | undefined {
    return this.tms.get(tmId);
  }

  all(): RegisteredTaskManager[] {
    return [...this.tms.values()];
  }

  /** Takes a slot on the TaskManager with the most free slots (spreads tasks). */
  allocateSlot(): RegisteredTaskManager | undefined {
    let best: RegisteredTaskManager | undefined;
    for (const tm of this.tms.values()) {
      if (tm.freeSlots > 0 && (!best || tm.freeSlots > best.freeSlots)) best = tm;
    }
    if (best) best.freeSlots--;
    return best;
  }

  /** A task the TaskManager kept through a failover was adopted: it holds one of its slots. */
  adoptSlot(tmId: string): void {
    const tm = this.tms.get(tmId);
    if (tm) tm.freeSlots = Math.max(0, tm.freeSlots - 1);
  }

  freeSlot(tmId: string): void {
    const tm = this.tms.get(tmId);
    if (tm) tm.freeSlots = Math.min(tm.slots, tm.freeSlots + 1);
  }

  /** Calls a TaskExecutorGateway method with the leader's deadline. */
  call<Req, Res>(
    tm: RegisteredTaskManager,
    method: (c: TaskExecutorGatewayClient) => Parameters<typeof unary<Req, Res>>[1],
    request: Req,
  ): Promise<Res> {
    return unary(tm.client, method(tm.client), request, this.rpcTimeoutMs);
  }

  overview(): TaskManagerInfo[] {
    return this.all().map((tm) => ({
      task_manager_id: tm.id,
      address: tm.address,
      slots_total: tm.slots,
      slots_free: tm.freeSlots,
      last_heartbeat_ms: tm.lastHeartbeatMs,
    }));
  }
}
