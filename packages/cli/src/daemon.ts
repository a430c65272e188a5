import { resolve } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import {
  ErrorCode,
  ReboundError,
  checkAuthenticationPolicy,
  createLogger,
  errorMessage,
  newInstanceId,
  type Configuration,
  type Logger,
} from '@rebound/core';
import { EtcdUnavailableError, createHaServices } from '@rebound/ha';
import { buildConfiguration } from './args.js';
import { formatDurationMs } from './format.js';
import type { ProcessRole } from './cluster-file.js';
import type { CliIo } from './io.js';
import type { DaemonOptions, ShuffleWorkerOptions, TaskManagerOptions } from './options.js';
import type { TextOutput } from './progress.js';

/** What every daemon entry point returns. */
export interface DaemonProcess {
  readonly id: string;
  readonly address: string;
  close(): Promise<void>;
}

/** The JSON line a daemon prints on stdout once it serves; `rebound local` waits for it. */
export interface ReadyLine {
  readonly event: 'ready';
  readonly role: ProcessRole;
  readonly id: string;
  readonly address: string;
  readonly pid: number;
}

export function parseReadyLine(line: string): ReadyLine | undefined {
  let o: Partial<ReadyLine>;
  try {
    o = JSON.parse(line) as Partial<ReadyLine>;
  } catch {
    return undefined;
  }
  if (o?.event !== 'ready' || typeof o.id !== 'string' || typeof o.address !== 'string' || typeof o.pid !== 'number')
    return undefined;
  if (o.role !== 'jobmaster' && o.role !== 'taskmanager' && o.role !== 'shuffle-worker') return undefined;
  return { event: 'ready', role: o.role, id: o.id, address: o.address, pid: o.pid };
}

type StopSignal = 'SIGTERM' | 'SIGINT';

/** The part of `process` the lifecycle listens to (a fake in tests). */
export interface SignalSource {
  on(event: StopSignal, listener: () => void): unknown;
  off(event: StopSignal, listener: () => void): unknown;
}

export interface DaemonLifecycleOptions {
  readonly role: ProcessRole;
  readonly start: () => Promise<DaemonProcess>;
  readonly logger: Logger;
  readonly stdout: TextOutput;
  readonly signals: SignalSource;
  readonly pid: number;
  readonly shutdownTimeoutMs: number;
  /** Longest start-up (`cluster.startup.timeout`): a start that takes longer fails the daemon. */
  readonly startupTimeoutMs: number;
  /**
   * Log a failed start (default true). Off when the log goes to stderr: the top-level handler
   * prints the one-line error there already.
   */
  readonly logStartFailure?: boolean;
}

/**
 * Runs a daemon until SIGTERM/SIGINT: the handlers are installed before start(), so a signal that
 * arrives while starting or right after the ready line is never lost (and never kills the process
 * without close()). Resolves with the exit code once the daemon has closed.
 */
export async function runDaemonLifecycle(opts: DaemonLifecycleOptions): Promise<number> {
  const { logger, signals } = opts;
  let stopSignal: StopSignal | undefined;
  let onStop!: (signal: StopSignal) => void;
  const stopRequested = new Promise<StopSignal>((r) => (onStop = r));
  let onForce!: () => void;
  const forced = new Promise<'forced'>((r) => (onForce = () => r('forced')));
  const listeners = new Map<StopSignal, () => void>();
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    const listener = (): void => {
      if (stopSignal) {
        logger.warn({ signal }, 'second stop signal while shutting down; exiting without waiting');
        onForce();
        return;
      }
      stopSignal = signal;
      onStop(signal);
    };
    listeners.set(signal, listener);
    signals.on(signal, listener);
  }
  const removeListeners = (): void => {
    for (const [signal, listener] of listeners) signals.off(signal, listener);
  };

  // start() may hang (a start-up step waiting on a broken disk or path): it is raced against a
  // deadline and against a stop signal, so the daemon never outlives a SIGTERM by more than the
  // shutdown timeout, whatever start() is doing.
  logger.debug({ event: 'daemon.starting' }, `${opts.role} starting`);
  const starting = opts.start();
  let startTimer: NodeJS.Timeout | undefined;
  const startDeadline = new Promise<'deadline'>(
    (r) => (startTimer = setTimeout(() => r('deadline'), opts.startupTimeoutMs)),
  );
  let first: DaemonProcess | 'deadline' | StopSignal;
  try {
    first = await Promise.race([starting, startDeadline, stopRequested]);
  } catch (err) {
    removeListeners();
    if (opts.logStartFailure !== false) logger.fatal({ err }, `${opts.role} failed to start: ${errorMessage(err)}`);
    throw err;
  } finally {
    clearTimeout(startTimer);
  }
  if (first === 'deadline') {
    removeListeners();
    throw new StartupTimeoutError(opts.role, opts.startupTimeoutMs);
  }
  let proc: DaemonProcess;
  if (typeof first === 'string') {
    logger.info({ signal: first }, `${opts.role} stopping while it starts`);
    const late = await settleWithin(starting, opts.shutdownTimeoutMs);
    if (late === undefined) {
      removeListeners();
      logger.error(
        { timeoutMs: opts.shutdownTimeoutMs },
        `${opts.role} did not finish starting within the shutdown timeout; exiting anyway`,
      );
      return 1;
    }
    proc = late;
  } else {
    proc = first;
  }
  if (!stopSignal) {
    const ready: ReadyLine = { event: 'ready', role: opts.role, id: proc.id, address: proc.address, pid: opts.pid };
    opts.stdout.write(`${JSON.stringify(ready)}\n`);
    logger.info({ ...ready }, `${opts.role} ${proc.id} ready at ${proc.address}`);
  }
  const signal = await stopRequested;
  logger.info({ signal }, `${opts.role} ${proc.id} shutting down`);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), opts.shutdownTimeoutMs)));
  try {
    const outcome = await Promise.race([proc.close().then(() => 'closed' as const), timeout, forced]);
    if (outcome === 'timeout') {
      logger.error(
        { timeoutMs: opts.shutdownTimeoutMs },
        `${opts.role} ${proc.id} did not close in time; exiting anyway`,
      );
      return 1;
    }
    if (outcome === 'forced') return 1;
    logger.info(`${opts.role} ${proc.id} stopped`);
    return 0;
  } catch (err) {
    logger.error({ err }, `${opts.role} ${proc.id} failed to close cleanly`);
    return 1;
  } finally {
    clearTimeout(timer);
    removeListeners();
  }
}

/** Start-up did not finish in time: something it waits on (a path, a port, the HA directory) hangs. */
export class StartupTimeoutError extends ReboundError {
  constructor(role: ProcessRole, timeoutMs: number) {
    super(
      ErrorCode.UNAVAILABLE,
      `${role} did not finish starting within ${formatDurationMs(timeoutMs)} (cluster.startup.timeout); check that its --ha-dir and --data-dir are usable local directories`,
    );
  }
}

/** The value of `p` if it settles successfully within `ms`; undefined on timeout or failure. */
async function settleWithin<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), ms)));
  try {
    return await Promise.race([p.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * grpc-js prints its own errors on stderr ("E No address added ..."). Every one of them also
 * reaches us as a failed call or bind, which we report; keep grpc's own words at debug level.
 */
function routeGrpcLogs(logger: Logger): void {
  const log = logger.child({ component: 'grpc' });
  const write = (...args: unknown[]): void => log.debug(args.map(String).join(' '));
  grpc.setLogger({ error: write, info: write, debug: write });
  grpc.setLogVerbosity(grpc.logVerbosity.ERROR);
}

/** Last-resort handlers: a daemon logs what killed it, and prints one line, before exiting. */
function installCrashHandlers(logger: Logger, io: CliIo): void {
  const die = (kind: string) => (err: unknown) => {
    logger.fatal({ err }, `${kind}: ${errorMessage(err)}`);
    io.stderr.write(`rebound: ${kind}: ${errorMessage(err).split('\n')[0]}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', die('uncaught exception'));
  process.on('unhandledRejection', die('unhandled rejection'));
}

async function runDaemon(
  role: ProcessRole,
  opts: DaemonOptions,
  config: Configuration,
  io: CliIo,
  start: (id: string, logger: Logger) => Promise<DaemonProcess>,
): Promise<number> {
  const id = opts.id ?? newInstanceId(role === 'jobmaster' ? 'jm' : role === 'taskmanager' ? 'tm' : 'sw');
  const logger = createLogger(role, { ...(opts.logFile ? { file: resolve(io.cwd, opts.logFile) } : {}) }).child({
    processId: id,
  });
  installCrashHandlers(logger, io);
  routeGrpcLogs(logger);
  return runDaemonLifecycle({
    role,
    start: async () => {
      // Before anything binds: an open daemon is refused, or warned about at every start.
      const open = checkAuthenticationPolicy(role, config);
      if (open) logger.warn({ event: 'security.unauthenticated' }, open);
      return start(id, logger);
    },
    logger,
    stdout: io.stdout,
    signals: process,
    pid: process.pid,
    shutdownTimeoutMs: opts.shutdownTimeoutMs,
    startupTimeoutMs: config.getDurationMs('cluster.startup.timeout'),
    logStartFailure: opts.logFile !== undefined,
  });
}

/**
 * Tries of the start-up HA check. The first etcd call of a process also sets its client up (proto
 * loading, the channel): on a starved machine (containers starting together) that alone can
 * outlast high-availability.etcd.request-timeout once, which is no reason to exit. An etcd that
 * is really unreachable still fails the start within a few request timeouts, in one line.
 */
const STARTUP_HA_ATTEMPTS = 3;

async function assertHaUsable(config: Configuration, haDir: string, logger: Logger): Promise<void> {
  const ha = createHaServices(config, haDir);
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        await ha.assertUsable();
        return;
      } catch (err) {
        if (!(err instanceof EtcdUnavailableError) || attempt >= STARTUP_HA_ATTEMPTS) throw err;
        logger.warn({ attempt, err: errorMessage(err) }, `HA services not usable yet (${ha.describe()}); trying again`);
      }
    }
  } finally {
    await ha.close();
  }
}

export async function runJobMaster(opts: DaemonOptions, io: CliIo): Promise<number> {
  const config = buildConfiguration(opts);
  const haDir = resolve(io.cwd, opts.haDir);
  const { startJobMasterProcess } = await import('@rebound/jobmaster');
  return runDaemon('jobmaster', opts, config, io, async (id, logger) => {
    // etcd unreachable: one line naming the endpoints now, not a JobMaster that never leads.
    if (config.getString('high-availability.type') === 'etcd') await assertHaUsable(config, haDir, logger);
    return startJobMasterProcess({ haDir, config, id, logger });
  });
}

export async function runTaskManager(opts: TaskManagerOptions, io: CliIo): Promise<number> {
  const config = buildConfiguration(opts);
  const haDir = resolve(io.cwd, opts.haDir);
  const dataDir = resolve(io.cwd, opts.dataDir);
  const { startTaskManagerProcess } = await import('@rebound/taskmanager');
  return runDaemon('taskmanager', opts, config, io, async (id, logger) => {
    await assertHaUsable(config, haDir, logger);
    return startTaskManagerProcess({ haDir, dataDir, slots: opts.slots, config, id, logger });
  });
}

export async function runShuffleWorker(opts: ShuffleWorkerOptions, io: CliIo): Promise<number> {
  const config = buildConfiguration(opts);
  const haDir = resolve(io.cwd, opts.haDir);
  const dataDir = resolve(io.cwd, opts.dataDir);
  const { keepShuffleWorkerId, resolveShuffleWorkerId, startShuffleWorkerProcess } =
    await import('@rebound/shuffle-worker');
  // The data directory keeps its worker's id: the leader knows the partitions in it by that id.
  const identity = await resolveShuffleWorkerId(dataDir, opts.id);
  return runDaemon('shuffle-worker', { ...opts, id: identity.id }, config, io, async (workerId, logger) => {
    await assertHaUsable(config, haDir, logger);
    // Only a start that passed its checks claims the directory (a refused one leaves it free).
    await keepShuffleWorkerId(dataDir, identity);
    return startShuffleWorkerProcess({ id: workerId, haDir, dataDir, config, logger });
  });
}
