import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import { ErrorCode, JobModuleInvalidError, UserCodeError, errorMessage, systemClock } from '@rebound/core';
import type { Clock, Logger } from '@rebound/core';
import { PoisonJobModuleError, RelayedUserCodeError } from './user-code-errors.js';
import type {
  CoordinatorHolderApi,
  CoordinatorHolderSpec,
  JobUserCode,
  SourceCoordinatorApi,
  UserOperatorInfo,
} from './job-user-code.js';
import { RemoteCoordinatorHolder, RemoteSourceCoordinator, type UserCodeCalls } from './remote-coordinators.js';
import {
  EXITING_REPLY,
  RUNTIME_HANDLE,
  type LoadedJob,
  type UserCodeCall,
  type UserCodeCommand,
  type UserCodeEvent,
  type UserCodeReply,
  type UserCodeWorkerData,
} from './user-code-protocol.js';

export interface WorkerUserCodeOptions {
  readonly jobId: string;
  readonly modulePath: string;
  readonly args: readonly string[];
  readonly cwd: string | undefined;
  /** The bundled worker entry (UserCodeWorkers). */
  readonly entryFile: string;
  /** jobmaster.job-module.load-timeout */
  readonly loadTimeoutMs: number;
  /**
   * jobmaster.user-code.call-timeout: a synchronous call, or the worker's silence, longer than
   * this ends it. A synchronous call blocks this thread meanwhile.
   */
  readonly callTimeoutMs: number;
  /**
   * The deadline of a call this thread waits on synchronously: at most a third of
   * high-availability.lease.timeout, so that a hung worker never costs the JobMaster its lease.
   */
  readonly syncCallTimeoutMs: number;
  /** jobmaster.user-code.heap-size, in MiB. */
  readonly heapMb: number;
  readonly logger: Logger;
  readonly clock?: Clock;
}

/** How often a synchronous call looks at its deadline while it waits. */
const SYNC_SLICE_MS = 50;

/**
 * One job's user code in a worker thread of its own, so that no job can stop the JobMaster. The
 * JobMaster sees the same SourceCoordinator and coordinator holder it would run itself, as
 * proxies: asynchronous calls (start, restore, a split or coordination request) are messages;
 * the ones its state machine makes synchronously (a reset, a snapshot written with its event)
 * block on the worker's answer with a deadline, through a shared flag and `receiveMessageOnPort`.
 * `process.exit()` in a worker ends only the worker; a throw from a timer is its 'error'; a heap
 * past `heapMb` ends it with ERR_WORKER_OUT_OF_MEMORY; an endless loop shows as a worker that
 * stops answering pings or a synchronous call past its deadline, and terminate() ends it. Each
 * fails the job with the reason, and nothing else.
 */
export class WorkerUserCode implements JobUserCode, UserCodeCalls {
  private readonly flag: Int32Array;
  private readonly pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private operators = new Map<string, UserOperatorInfo>();
  private dead: string | undefined;
  private readonly listeners: ((reason: string) => void)[] = [];
  private watchdog: NodeJS.Timeout | undefined;
  /** The worker answered something since the watchdog's last ping. */
  private answered = true;
  private readonly clock: Clock;
  /** How the worker ended, for the load's error. */
  private crash: string | undefined;
  private exitCode: number | undefined;
  private exiting: string | undefined;

  private constructor(
    private readonly worker: Worker,
    private readonly syncPort: MessagePort,
    syncFlag: SharedArrayBuffer,
    private readonly opts: WorkerUserCodeOptions,
  ) {
    this.flag = new Int32Array(syncFlag);
    this.clock = opts.clock ?? systemClock;
    worker.on('message', (e: UserCodeEvent) => this.onEvent(e));
    worker.on('error', (err) => {
      this.crash =
        (err as { code?: unknown }).code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? `ran out of its heap (jobmaster.user-code.heap-size ${opts.heapMb} MiB)`
          : `crashed: ${firstLine(errorMessage(err))}`;
      if (this.dead !== undefined && this.dead !== 'was closed')
        opts.logger.warn({ err: this.crash }, "the job's user-code worker ended with an error");
      this.die(this.crash);
    });
    worker.on('exit', (code) => {
      this.exitCode = code;
      this.die(this.exiting ?? `exited its thread (exit code ${code})`);
    });
  }

  /** Starts the worker and loads the job module in it; throws PoisonJobModuleError when that fails. */
  static async start(opts: WorkerUserCodeOptions): Promise<WorkerUserCode> {
    const { port1, port2 } = new MessageChannel();
    const syncFlag = new SharedArrayBuffer(4);
    const self = new WorkerUserCode(
      new Worker(opts.entryFile, {
        workerData: {
          modulePath: opts.modulePath,
          args: [...opts.args],
          cwd: opts.cwd,
          logLevel: opts.logger.level,
          syncPort: port2,
          syncFlag,
        } satisfies UserCodeWorkerData,
        transferList: [port2],
        resourceLimits: { maxOldGenerationSizeMb: opts.heapMb },
      }),
      port1,
      syncFlag,
      opts,
    );
    await self.load();
    return self;
  }

  private async load(): Promise<void> {
    const { jobId, loadTimeoutMs } = this.opts;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new PoisonJobModuleError(
              jobId,
              `did not finish loading within ${loadTimeoutMs} ms (jobmaster.job-module.load-timeout)`,
            ),
          ),
        loadTimeoutMs,
      );
    });
    try {
      const loaded = (await Promise.race([this.callAsync(RUNTIME_HANDLE, 'load', []), timeout])) as LoadedJob;
      this.operators = new Map(loaded.operators.map((o) => [o.id, o]));
    } catch (err) {
      const { crash, exitCode, exiting } = this;
      await this.close();
      if (err instanceof PoisonJobModuleError) throw err;
      if (crash !== undefined)
        throw new PoisonJobModuleError(
          jobId,
          crash.startsWith('crashed: ') ? `crashed while loading: ${crash.slice(9)}` : `${crash} while loading`,
        );
      if (exiting !== undefined && !exiting.startsWith('called process.exit'))
        throw new PoisonJobModuleError(jobId, `${exiting} while loading`);
      if (exitCode !== undefined)
        throw new PoisonJobModuleError(jobId, `exited its process (exit code ${exitCode}) while loading`);
      throw new JobModuleInvalidError(`job ${jobId}: ${firstLine(errorMessage(err))}`);
    } finally {
      clearTimeout(timer);
    }
    this.startWatchdog();
  }
  /**
   * Pings the worker every interval and ends it once `call-timeout` worth of pings in a row went
   * unanswered. Counted in this thread's own ticks, not in wall time: a JobMaster that was
   * SIGSTOPped or starved wakes with its worker's last answer far in the past although the worker
   * was stopped with it (chaos seed 9033, jobmasters-pause: a wall-clock judgement failed the job).
   */
  private startWatchdog(): void {
    const intervalMs = Math.max(10, Math.min(1000, Math.floor(this.opts.callTimeoutMs / 4)));
    const allowed = Math.max(2, Math.ceil(this.opts.callTimeoutMs / intervalMs));
    let unanswered = 0;
    this.answered = true;
    this.watchdog = setInterval(() => {
      if (this.dead !== undefined) return;
      unanswered = this.answered ? 0 : unanswered + 1;
      if (unanswered >= allowed) {
        this.die(
          `stopped answering for ${unanswered * intervalMs} ms (jobmaster.user-code.call-timeout ${this.opts.callTimeoutMs} ms): an endless loop?`,
        );
        return;
      }
      this.answered = false;
      this.post({ kind: 'ping' });
    }, intervalMs);
    this.watchdog.unref();
  }

  private post(cmd: UserCodeCommand): void {
    try {
      this.worker.postMessage(cmd);
    } catch (err) {
      this.die(`cannot be reached: ${errorMessage(err)}`);
    }
  }

  private onEvent(e: UserCodeEvent): void {
    switch (e.kind) {
      case 'pong':
        this.answered = true;
        return;
      case 'log':
        this.relayLog(e.line);
        return;
      case 'exiting':
        this.exiting = e.reason;
        return;
      case 'reply': {
        this.answered = true;
        const p = this.pending.get(e.reply.id);
        if (!p) return;
        this.pending.delete(e.reply.id);
        if (e.reply.ok) p.resolve(e.reply.value);
        else p.reject(this.relayed(e.reply));
        return;
      }
    }
  }

  /** A log line of the worker's pino, into this JobMaster's log at the same level. */
  private relayLog(line: string): void {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(line) as Record<string, unknown>;
    } catch {
      return;
    }
    const { level, msg, ...fields } = entry;
    const text = typeof msg === 'string' ? msg : '';
    const n = typeof level === 'number' ? level : 30;
    const log = this.opts.logger;
    if (n >= 50) log.error(fields, text);
    else if (n >= 40) log.warn(fields, text);
    else if (n >= 30) log.info(fields, text);
    else log.debug(fields, text);
  }

  private relayed(reply: Extract<UserCodeReply, { ok: false }>): Error {
    const code = Object.values(ErrorCode).find((c) => c === reply.code) ?? ErrorCode.USER_CODE;
    return new RelayedUserCodeError(code, reply.message);
  }

  private deadError(): UserCodeError {
    return new UserCodeError(`job ${this.opts.jobId}: its user code on the JobMaster ${this.dead}`);
  }

  /** An asynchronous call: the worker keeps serving others while this one waits. */
  callAsync(handle: number, method: string, args: readonly unknown[]): Promise<unknown> {
    if (this.dead !== undefined) return Promise.reject(this.deadError());
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.post({ kind: 'call', call: { id, handle, method, args } });
    });
  }

  /**
   * A call whose caller cannot wait asynchronously (a split request, a snapshot written with its
   * event): this thread blocks until the worker answers, the worker ends, or the call timeout
   * passes, which ends the worker.
   */
  callSync(handle: number, method: string, args: readonly unknown[]): unknown {
    if (this.dead !== undefined) throw this.deadError();
    const call: UserCodeCall = { id: this.nextId++, handle, method, args };
    Atomics.store(this.flag, 0, 0);
    this.syncPort.postMessage(call);
    const deadline = this.clock.now() + this.opts.syncCallTimeoutMs;
    let reply: UserCodeReply | undefined;
    for (;;) {
      Atomics.wait(this.flag, 0, 0, SYNC_SLICE_MS);
      reply = (receiveMessageOnPort(this.syncPort)?.message as UserCodeReply | undefined) ?? undefined;
      if (reply) break;
      // A worker that ran out of its heap ends silently, and its 'exit' cannot run while this
      // thread waits: the deadline finds it, as it finds an endless loop.
      if (this.clock.now() >= deadline) {
        this.die(
          `did not return from ${method} within ${this.opts.syncCallTimeoutMs} ms (jobmaster.user-code.call-timeout, at most a third of high-availability.lease.timeout): an endless loop, or out of its heap (jobmaster.user-code.heap-size ${this.opts.heapMb} MiB)`,
        );
        throw this.deadError();
      }
    }
    this.answered = true;
    if (reply.id === EXITING_REPLY) {
      this.die(`${reply.ok ? 'exited' : reply.message} in ${method}`);
      throw this.deadError();
    }
    if (!reply.ok) throw this.relayed(reply);
    return reply.value;
  }

  private die(reason: string): void {
    if (this.dead !== undefined) return;
    this.dead = reason;
    clearInterval(this.watchdog);
    const err = this.deadError();
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    void this.worker.terminate().catch(() => undefined);
    this.opts.logger.error({ reason }, "the job's user code on the JobMaster ended; the job fails");
    for (const l of this.listeners.splice(0)) l(err.message);
  }

  operator(id: string): UserOperatorInfo | undefined {
    return this.operators.get(id);
  }

  estimateSplits(operatorId: string): number | undefined {
    return this.callSync(RUNTIME_HANDLE, 'estimateSplits', [operatorId]) as number | undefined;
  }

  createSourceCoordinator(operatorId: string, vertexName: string, parallelism: number): SourceCoordinatorApi {
    const handle = this.callSync(RUNTIME_HANDLE, 'createSource', [operatorId, vertexName, parallelism]) as number;
    return new RemoteSourceCoordinator(this, handle, operatorId, vertexName, parallelism);
  }

  createCoordinatorHolder(spec: CoordinatorHolderSpec): CoordinatorHolderApi {
    const handle = this.callSync(RUNTIME_HANDLE, 'createHolder', [spec]) as number;
    return new RemoteCoordinatorHolder(this, handle, spec.vertexId, spec.operatorId);
  }

  /** Whether the worker still runs: calls on a dead one throw, closing one is a no-op. */
  isAlive(): boolean {
    return this.dead === undefined;
  }

  onFailure(listener: (reason: string) => void): void {
    if (this.dead !== undefined) listener(this.deadError().message);
    else this.listeners.push(listener);
  }

  async close(): Promise<void> {
    if (this.dead === undefined) {
      this.dead = 'was closed';
      this.listeners.length = 0;
    }
    clearInterval(this.watchdog);
    for (const p of this.pending.values()) p.reject(this.deadError());
    this.pending.clear();
    this.syncPort.close();
    await this.worker.terminate().catch(() => undefined);
  }
}

function firstLine(text: string): string {
  return text.split('\n')[0]!;
}
