import {
  CHANNEL_OPTIONS,
  type ClusterOverview__Output,
  ClusterSecurity,
  type Configuration,
  type DispatcherClient,
  ErrorCode,
  fromServiceError,
  IllegalStateError,
  InternalError,
  type JobResultChunk__Output,
  type JobStatus__Output,
  type JobSummary__Output,
  LeaderNotFoundError,
  loadProto,
  NotLeaderError,
  ReboundError,
  sleep,
  type SubmitJobRequest,
  unary,
  UnavailableError,
  withContext,
} from '@rebound/core';
import type { HighAvailabilityServices } from '@rebound/ha';
import { tryReadClusterFile } from './cluster-file.js';
import {
  clientConfiguration,
  haServicesOf,
  resolveClusterTarget,
  type ClusterTarget,
  type ClusterTargetOptions,
} from './cluster-target.js';
import { ClusterNotFoundError } from './errors.js';
import { isProcessAlive } from './processes.js';

/** Where the client currently sends its calls. */
export interface LeaderAddress {
  readonly address: string;
  readonly epoch?: number;
  readonly jobmasterId?: string;
}

export interface ClusterClientOptions {
  /** Deadline of each call (rpc.timeout). */
  readonly rpcTimeoutMs: number;
  /** How long a call keeps retrying while no leader answers (failover in progress, cluster starting). */
  readonly failoverTimeoutMs: number;
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Called once per observed change of leader (not for the first resolution). */
  readonly onLeaderChange?: (leader: LeaderAddress) => void;
  /** The cluster secret and TLS material calls carry (default: none). */
  readonly security?: ClusterSecurity;
}

/** Call options that depend on the cluster's configuration. */
export function clientOptionsFrom(
  config: Configuration,
): Pick<ClusterClientOptions, 'rpcTimeoutMs' | 'failoverTimeoutMs' | 'security'> {
  const rpcTimeoutMs = config.getDurationMs('rpc.timeout');
  const leaseMs = config.getDurationMs('high-availability.lease.timeout');
  const pollMs = config.getDurationMs('high-availability.lease.poll-interval');
  // A failover takes a lease timeout plus a poll to elect, then the new leader needs to start serving.
  return {
    rpcTimeoutMs,
    failoverTimeoutMs: Math.max(5_000, 2 * leaseMs + 2 * pollMs + 2 * rpcTimeoutMs),
    security: ClusterSecurity.of(config),
  };
}

export interface CallOptions {
  /** Overrides ClusterClientOptions.failoverTimeoutMs for this call (0: a single attempt). */
  readonly failoverTimeoutMs?: number;
}

const RETRYABLE: ReadonlySet<string> = new Set([
  ErrorCode.UNAVAILABLE,
  ErrorCode.NOT_LEADER,
  ErrorCode.LEADER_NOT_FOUND,
]);

/**
 * The Dispatcher of whichever JobMaster leads, with deadlines on every call and transparent
 * re-resolution of the leader through `<ha>/leader.json` when a call finds no leader.
 */
export class ClusterClient {
  private readonly stubs = new Map<string, DispatcherClient>();
  private leader: LeaderAddress | undefined;
  private closed = false;
  private ha: HighAvailabilityServices | undefined;

  constructor(
    readonly target: ClusterTarget,
    private readonly options: ClusterClientOptions,
  ) {}

  /** Resolves `opts` and builds a client with the timeouts of the cluster's configuration. */
  static async connect(
    opts: ClusterTargetOptions,
    extra: {
      readonly cwd?: string;
      readonly onLeaderChange?: (leader: LeaderAddress) => void;
      readonly failoverTimeoutMs?: number;
    } = {},
  ): Promise<ClusterClient> {
    const target = await resolveClusterTarget(opts, extra.cwd);
    const base = clientOptionsFrom(clientConfiguration(target));
    return new ClusterClient(target, {
      ...base,
      ...(extra.failoverTimeoutMs !== undefined ? { failoverTimeoutMs: extra.failoverTimeoutMs } : {}),
      ...(extra.onLeaderChange ? { onLeaderChange: extra.onLeaderChange } : {}),
    });
  }

  /** The leader the last call went to. */
  currentLeader(): LeaderAddress | undefined {
    return this.leader;
  }

  submitJob(request: SubmitJobRequest, opts?: CallOptions): Promise<string> {
    // The job id is chosen by the client, so a retried submission names the same job.
    return this.call('SubmitJob', (stub, t) => unary(stub, stub.SubmitJob, request, t), opts).then((r) => r.job_id);
  }

  listJobs(opts?: CallOptions): Promise<JobSummary__Output[]> {
    return this.call('ListJobs', (stub, t) => unary(stub, stub.ListJobs, {}, t), opts).then((r) => r.jobs);
  }

  getJobStatus(jobId: string, opts?: CallOptions): Promise<JobStatus__Output> {
    return this.call('GetJobStatus', (stub, t) => unary(stub, stub.GetJobStatus, { job_id: jobId }, t), opts);
  }

  cancelJob(jobId: string, opts?: CallOptions): Promise<string> {
    return this.call('CancelJob', (stub, t) => unary(stub, stub.CancelJob, { job_id: jobId }, t), opts).then(
      (r) => r.state,
    );
  }

  getClusterOverview(opts?: CallOptions): Promise<ClusterOverview__Output> {
    return this.call('GetClusterOverview', (stub, t) => unary(stub, stub.GetClusterOverview, {}, t), opts);
  }

  /**
   * Streams a finished job's collect() result to `onData` (whole lines, in order), from the
   * leader, resuming at the last position received on whichever JobMaster leads next when the
   * stream breaks: every byte is delivered once. The failover budget restarts with each chunk,
   * and each stream has `streamTimeoutMs` as its deadline (a longer result resumes after it).
   */
  async fetchJobResult(
    jobId: string,
    onData: (data: Buffer) => void | Promise<void>,
    opts: {
      readonly streamTimeoutMs: number;
      readonly maxChunkBytes?: number;
      /** Called before each stream after the first, with where it resumes. */
      readonly onResume?: (at: { fileIndex: number; offset: number }) => void;
    },
  ): Promise<void> {
    let pos = { fileIndex: 0, offset: 0 };
    let done = false;
    let streams = 0;
    while (!done) {
      const before = pos;
      try {
        await this.call(
          'FetchJobResult',
          (stub) =>
            new Promise<void>((resolve, reject) => {
              if (streams++ > 0) opts.onResume?.(pos);
              const stream = stub.FetchJobResult(
                {
                  job_id: jobId,
                  file_index: pos.fileIndex,
                  offset: pos.offset,
                  max_chunk_bytes: opts.maxChunkBytes ?? 0,
                },
                { deadline: Date.now() + opts.streamTimeoutMs },
              );
              // grpc-js reports a broken stream at once but still holds the chunks that came
              // before it. The call settles only at 'end', after those were delivered: a retry
              // started earlier would feed the consumer twice at once, out of order.
              let failure: ReboundError | undefined;
              let settled = false;
              const fail = (err: unknown): void => {
                if (settled) return;
                settled = true;
                stream.cancel();
                reject(err);
              };
              stream.on('data', (chunk: JobResultChunk__Output) => {
                if (settled) return;
                if (chunk.file_index !== pos.fileIndex || chunk.offset !== pos.offset) {
                  fail(
                    new InternalError(
                      `FetchJobResult of job ${jobId} sent file ${chunk.file_index} at ${chunk.offset}, expected file ${pos.fileIndex} at ${pos.offset}`,
                    ),
                  );
                  return;
                }
                pos = chunk.end_of_file
                  ? { fileIndex: chunk.file_index + 1, offset: 0 }
                  : { fileIndex: chunk.file_index, offset: chunk.offset + chunk.data.length };
                // A consumer that is slow (or a test holding the stream) pauses it: flow control
                // then holds the leader to what is in flight.
                const wait = chunk.data.length > 0 ? onData(Buffer.from(chunk.data)) : undefined;
                if (wait) {
                  stream.pause();
                  void wait.then(() => stream.resume(), fail);
                }
              });
              stream.on('error', (err) => {
                failure ??= fromServiceError(err);
              });
              stream.on('end', () => {
                if (settled) return;
                settled = true;
                if (failure) reject(failure);
                else resolve();
              });
            }),
        );
        done = true;
      } catch (raw) {
        const err = fromServiceError(raw);
        // A stream that moved on and then broke (deadline, the leader gone) resumes where it was.
        const moved = pos.fileIndex !== before.fileIndex || pos.offset !== before.offset;
        const resumable = RETRYABLE.has(err.code);
        if (!(moved && resumable)) throw err;
      }
    }
  }

  close(): void {
    this.closed = true;
    for (const stub of this.stubs.values()) stub.close();
    this.stubs.clear();
    void this.ha?.close();
    this.ha = undefined;
  }

  private async call<Res>(
    what: string,
    invoke: (stub: DispatcherClient, timeoutMs: number) => Promise<Res>,
    opts: CallOptions = {},
  ): Promise<Res> {
    const budget = opts.failoverTimeoutMs ?? this.options.failoverTimeoutMs;
    const deadline = Date.now() + budget;
    let backoff = this.options.initialBackoffMs ?? 100;
    const maxBackoff = this.options.maxBackoffMs ?? 1_000;
    for (;;) {
      if (this.closed) throw new IllegalStateError('the cluster client is closed');
      let err: ReboundError;
      try {
        const leader = await this.resolveLeader();
        return await invoke(this.stubFor(leader.address), this.options.rpcTimeoutMs);
      } catch (raw) {
        err = fromServiceError(raw);
      }
      if (!RETRYABLE.has(err.code)) throw err;
      if (this.target.kind === 'address') throw this.addressError(err);
      await this.assertClusterRunning();
      if (Date.now() + backoff > deadline) throw this.unreachable(what, err, budget);
      await sleep(backoff);
      backoff = Math.min(maxBackoff, backoff * 2);
    }
  }

  private async resolveLeader(): Promise<LeaderAddress> {
    if (this.target.kind === 'address') {
      this.leader ??= { address: this.target.address };
      return this.leader;
    }
    this.ha ??= haServicesOf(this.target);
    const info = await this.ha.getLeader();
    if (!info) {
      throw new LeaderNotFoundError(`no JobMaster leader is recorded in ${this.ha.describe()} yet`);
    }
    const next: LeaderAddress = { address: info.address, epoch: info.epoch, jobmasterId: info.jobmasterId };
    const prev = this.leader;
    this.leader = next;
    if (prev && (prev.epoch !== next.epoch || prev.address !== next.address)) {
      this.dropStub(prev.address);
      this.options.onLeaderChange?.(next);
    }
    return next;
  }

  private stubFor(address: string): DispatcherClient {
    let stub = this.stubs.get(address);
    if (!stub) {
      const proto = loadProto();
      const security = this.options.security ?? ClusterSecurity.none();
      stub = new proto.Dispatcher(address, security.channelCredentials(), security.channelOptions(CHANNEL_OPTIONS));
      this.stubs.set(address, stub);
    }
    return stub;
  }

  private dropStub(address: string): void {
    this.stubs.get(address)?.close();
    this.stubs.delete(address);
  }

  /** For a local cluster, fail at once rather than wait for a leader when no JobMaster runs at all. */
  private async assertClusterRunning(): Promise<void> {
    if (this.target.kind !== 'cluster') return;
    const file = (await tryReadClusterFile(this.target.workdir)) ?? this.target.file;
    const jobmasters = file.processes.filter((p) => p.role === 'jobmaster');
    if (!jobmasters.some((p) => isProcessAlive(p.pid, p.id))) {
      const dir = this.target.workdir;
      throw new ClusterNotFoundError(
        `no JobMaster of the cluster in ${dir} is running; start the cluster with 'rebound local up --cluster ${dir}' or a JobMaster with 'rebound local start-jobmaster --cluster ${dir}'`,
      );
    }
  }

  private addressError(err: ReboundError): ReboundError {
    const address = this.target.kind === 'address' ? this.target.address : '';
    if (err.code === ErrorCode.NOT_LEADER) {
      return new NotLeaderError(
        `the JobMaster at ${address} is not the leader; use --ha-dir or --cluster to find the leader`,
      );
    }
    return withContext(err, `no JobMaster answered at ${address}: ${err.message}`);
  }

  private unreachable(what: string, err: ReboundError, budgetMs: number): ReboundError {
    const secs = `${Math.round(budgetMs / 100) / 10} s`;
    if (err.code === ErrorCode.LEADER_NOT_FOUND) {
      return new LeaderNotFoundError(
        `no JobMaster was elected leader within ${secs} (${err.message}); check 'rebound local status' and the JobMaster logs`,
      );
    }
    const leader = this.leader;
    const who = leader
      ? `the leader${leader.jobmasterId ? ` ${leader.jobmasterId}` : ''}${leader.epoch ? ` (epoch ${leader.epoch})` : ''} at ${leader.address}`
      : 'the leader';
    return new UnavailableError(
      `${what}: ${who} did not answer within ${secs} (${err.message}); is the cluster running? see 'rebound local status'`,
      { cause: err },
    );
  }
}
