import {
  CHANNEL_OPTIONS,
  ClusterSecurity,
  HeartbeatTimeouts,
  PeriodicTask,
  PermissionDeniedError,
  loadProto,
  sameSecret,
  unary,
} from '@rebound/core';
import type {
  Clock,
  Configuration,
  Logger,
  RegisterShuffleWorkerRequest__Output,
  RegisterShuffleWorkerResponse,
  ShuffleWorkerHeartbeatRequest__Output,
  ShuffleWorkerHeartbeatResponse,
  ShuffleWorkerServiceClient,
} from '@rebound/core';

export interface RegisteredShuffleWorker {
  readonly id: string;
  readonly address: string;
  readonly session: string;
  readonly registeredAtMs: number;
  lastHeartbeatMs: number;
  /** What the worker said it holds in its last heartbeat. */
  partitions: number;
  bytes: number;
  readonly client: ShuffleWorkerServiceClient;
}

export interface ShuffleWorkerRegistryListener {
  onShuffleWorkerRegistered(worker: RegisteredShuffleWorker, jobsWithPartitions: readonly string[]): void;
  onShuffleWorkerLost(workerId: string, reason: string): void;
}

export interface ShuffleWorkerRegistryOptions {
  readonly epoch: number;
  readonly jobmasterId: string;
  readonly config: Configuration;
  readonly listener: ShuffleWorkerRegistryListener;
  /** The jobs this leader runs: a worker deletes partitions of jobs no leader names (orphans). */
  readonly liveJobs: () => string[];
  readonly logger: Logger;
  readonly clock: Clock;
}

/**
 * The leader's view of the shuffle workers, as TaskManagerRegistry is of the TaskManagers:
 * registration bound to a session, heartbeats, and the clients every call to a worker takes.
 *
 * Unlike a TaskManager, a worker that restarts keeps its partitions (they are on its disk, and
 * the JobMaster knows them by the worker's id): a registration under a new session replaces the
 * old one without losing anything. It is refused only while the old session still sends
 * heartbeats, so that no one can take over the id of a live worker.
 */
export class ShuffleWorkerRegistry {
  private readonly workers = new Map<string, RegisteredShuffleWorker>();
  /** Workers a producer could not reach, until when no partition is placed on them. */
  private readonly excluded = new Map<string, number>();
  private readonly exclusionTimeoutMs: number;
  private readonly monitor: PeriodicTask;
  private readonly timeouts: HeartbeatTimeouts;
  private readonly heartbeatIntervalMs: number;
  private readonly heartbeatTimeoutMs: number;
  readonly rpcTimeoutMs: number;
  private readonly security: ClusterSecurity;

  constructor(private readonly opts: ShuffleWorkerRegistryOptions) {
    this.heartbeatIntervalMs = opts.config.getDurationMs('heartbeat.interval');
    this.heartbeatTimeoutMs = opts.config.getDurationMs('heartbeat.timeout');
    this.rpcTimeoutMs = opts.config.getDurationMs('rpc.timeout');
    this.exclusionTimeoutMs = opts.config.getDurationMs('shuffle.remote.exclusion-timeout');
    this.security = ClusterSecurity.of(opts.config);
    const checkIntervalMs = Math.max(20, Math.min(this.heartbeatIntervalMs, this.heartbeatTimeoutMs / 4));
    this.timeouts = new HeartbeatTimeouts({
      timeoutMs: this.heartbeatTimeoutMs,
      checkIntervalMs,
      clock: opts.clock,
      logger: opts.logger,
    });
    this.monitor = new PeriodicTask(checkIntervalMs, () => this.checkHeartbeats());
  }

  start(): void {
    this.monitor.start();
  }

  close(): void {
    this.monitor.stop();
    for (const w of this.workers.values()) w.client.close();
    this.workers.clear();
  }

  register(req: RegisterShuffleWorkerRequest__Output): RegisterShuffleWorkerResponse {
    if (!req.worker_id) throw new PermissionDeniedError('registration without a shuffle worker id refused');
    if (!req.session_id) throw new PermissionDeniedError(`registration of ${req.worker_id} without a session refused`);
    const existing = this.workers.get(req.worker_id);
    const now = this.opts.clock.now();
    if (existing && !sameSecret(existing.session, req.session_id)) {
      if (now - existing.lastHeartbeatMs <= this.heartbeatTimeoutMs) {
        this.opts.logger.warn(
          { event: 'session.reject', method: 'RegisterShuffleWorker', workerId: req.worker_id, address: req.address },
          'refused a registration under the id of a live shuffle worker',
        );
        throw new PermissionDeniedError(
          `shuffle worker ${req.worker_id} is registered and alive with another session; registration refused`,
        );
      }
    }
    existing?.client.close();
    const Ctor = loadProto().ShuffleWorkerService;
    const worker: RegisteredShuffleWorker = {
      id: req.worker_id,
      address: req.address,
      session: req.session_id,
      registeredAtMs: now,
      lastHeartbeatMs: now,
      partitions: 0,
      bytes: 0,
      client: new Ctor(req.address, this.security.channelCredentials(), this.security.channelOptions(CHANNEL_OPTIONS)),
    };
    this.workers.set(worker.id, worker);
    // A worker that registers again was restarted or reconnected: it is reachable.
    this.excluded.delete(worker.id);
    this.opts.logger.info(
      { workerId: worker.id, address: worker.address, jobs: req.jobs_with_partitions.length },
      existing ? 'shuffle worker registered again' : 'shuffle worker registered',
    );
    this.opts.listener.onShuffleWorkerRegistered(worker, req.jobs_with_partitions);
    return {
      epoch: this.opts.epoch,
      jobmaster_id: this.opts.jobmasterId,
      heartbeat_interval_ms: this.heartbeatIntervalMs,
      heartbeat_timeout_ms: this.heartbeatTimeoutMs,
    };
  }

  heartbeat(hb: ShuffleWorkerHeartbeatRequest__Output): ShuffleWorkerHeartbeatResponse {
    const worker = this.workers.get(hb.worker_id);
    if (!worker) return { registered: false, epoch: this.opts.epoch, live_jobs: [] };
    // A forged heartbeat must not keep a dead worker's partitions counted as alive.
    this.authenticate(hb.worker_id, hb.session_id, 'ShuffleWorkerHeartbeat');
    worker.lastHeartbeatMs = this.opts.clock.now();
    worker.partitions = hb.partitions;
    worker.bytes = hb.bytes;
    return { registered: true, epoch: this.opts.epoch, live_jobs: this.opts.liveJobs() };
  }

  private checkHeartbeats(): void {
    for (const { peer, silentMs } of this.timeouts.expired(this.workers.values()))
      this.remove(peer.id, `no heartbeat for ${silentMs} ms`);
  }

  /** Forgets a worker: the partitions only it held are lost. */
  remove(workerId: string, reason: string): void {
    const w = this.workers.get(workerId);
    if (!w) return;
    this.workers.delete(workerId);
    this.excluded.delete(workerId);
    w.client.close();
    this.opts.logger.warn({ workerId, reason }, 'shuffle worker lost');
    this.opts.listener.onShuffleWorkerLost(workerId, reason);
  }

  authenticate(workerId: string, session: string, method: string): RegisteredShuffleWorker {
    const w = this.workers.get(workerId);
    if (!w || !sameSecret(w.session, session)) {
      this.opts.logger.warn(
        { event: 'session.reject', method, workerId, registered: w !== undefined },
        'refused a call without the session of the shuffle worker it names',
      );
      throw new PermissionDeniedError(
        `${method} refused: ${w ? `the call does not carry the session of shuffle worker ${workerId}` : `no shuffle worker ${workerId} is registered`}`,
      );
    }
    return w;
  }

  get(workerId: string): RegisteredShuffleWorker | undefined {
    return this.workers.get(workerId);
  }

  all(): RegisteredShuffleWorker[] {
    return [...this.workers.values()];
  }

  /** A producer could not reach the worker: no partition goes there for shuffle.remote.exclusion-timeout. */
  exclude(workerId: string, reason: string): void {
    if (!this.workers.has(workerId)) return;
    const until = this.opts.clock.now() + this.exclusionTimeoutMs;
    if ((this.excluded.get(workerId) ?? 0) < until) this.excluded.set(workerId, until);
    this.opts.logger.warn(
      { workerId, reason, forMs: this.exclusionTimeoutMs },
      'shuffle worker excluded from placement: a producer could not reach it',
    );
  }

  /** The workers new partitions may go to: the registered ones not excluded, or all if every one is. */
  placeable(): RegisteredShuffleWorker[] {
    const now = this.opts.clock.now();
    const all = this.all();
    const open = all.filter((w) => (this.excluded.get(w.id) ?? 0) <= now);
    return open.length > 0 ? open : all;
  }

  /** Calls a ShuffleWorkerService method with the leader's deadline. */
  call<Req, Res>(
    w: RegisteredShuffleWorker,
    method: (c: ShuffleWorkerServiceClient) => Parameters<typeof unary<Req, Res>>[1],
    request: Req,
  ): Promise<Res> {
    return unary(w.client, method(w.client), request, this.rpcTimeoutMs);
  }
}
