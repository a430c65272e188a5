import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { IllegalStateError, InternalError, sleep, UnavailableError } from '@rebound/core';
import { ClusterPaths, type ClusterProcess, type ProcessRole } from './cluster-file.js';
import { parseReadyLine } from './daemon.js';
import { isProcessAlive, signalProcess, waitForExit } from './processes.js';

/**
 * bin/rebound.js: daemons run through it, so that they check and run the same build as the CLI. The
 * path holds from packages/cli/src and from the bundle in packages/cli/dist alike.
 */
export const REBOUND_BIN = fileURLToPath(new URL('../../../bin/rebound.js', import.meta.url));

export interface DaemonSpec {
  readonly workdir: string;
  readonly role: ProcessRole;
  readonly id: string;
  readonly haDir: string;
  /** `-D` values for the daemon. */
  readonly config: Readonly<Record<string, string>>;
  /** TaskManagers only. */
  readonly slots?: number;
  /** A command that runs node in place of itself (e.g. `ip netns exec <ns>`: a test's own host). */
  readonly launcher?: readonly string[];
}

/** A daemon spawned in the background, not yet known to be ready. */
export interface SpawnedDaemon {
  readonly spec: DaemonSpec;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly logFile: string;
  readonly outFile: string;
  readonly dataDir?: string;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  spawnError: Error | undefined;
}

export function daemonArgs(spec: DaemonSpec, logFile: string, dataDir: string | undefined): string[] {
  const args = [spec.role, '--ha-dir', spec.haDir, '--id', spec.id, '--log-file', logFile];
  if (spec.role === 'taskmanager') args.push('--slots', String(spec.slots ?? 2), '--data-dir', dataDir ?? '');
  if (spec.role === 'shuffle-worker') args.push('--data-dir', dataDir ?? '');
  for (const [k, v] of Object.entries(spec.config)) args.push('-D', `${k}=${v}`);
  return args;
}

/**
 * Starts a daemon detached, in its own process group, with stdout to `<logs>/<id>.out` and stderr
 * appended to its log file. Nothing ties it to this process, which may exit while it runs on.
 */
export function spawnDaemon(spec: DaemonSpec): SpawnedDaemon {
  mkdirSync(ClusterPaths.logsDir(spec.workdir), { recursive: true });
  const logFile = ClusterPaths.logFile(spec.workdir, spec.id);
  const outFile = ClusterPaths.outFile(spec.workdir, spec.id);
  const dataDir = spec.role === 'jobmaster' ? undefined : ClusterPaths.dataDir(spec.workdir, spec.id);
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // 'w': a restarted daemon must not be taken for ready because of its predecessor's line.
  const out = openSync(outFile, 'w');
  const err = openSync(logFile, 'a');
  let child: ChildProcess;
  try {
    const argv = [...(spec.launcher ?? []), process.execPath, REBOUND_BIN, ...daemonArgs(spec, logFile, dataDir)];
    child = spawn(argv[0]!, argv.slice(1), {
      detached: true,
      stdio: ['ignore', out, err],
      env: process.env,
    });
  } finally {
    closeSync(out);
    closeSync(err);
  }
  const spawned: SpawnedDaemon = {
    spec,
    child,
    pid: child.pid ?? -1,
    logFile,
    outFile,
    ...(dataDir ? { dataDir } : {}),
    exit: undefined,
    spawnError: undefined,
  };
  child.once('exit', (code, signal) => (spawned.exit = { code, signal }));
  child.once('error', (e) => (spawned.spawnError = e));
  child.unref();
  return spawned;
}

/** The line that best says why a daemon died: its `rebound: ...` line, else the last log message. */
export async function lastWords(logFile: string): Promise<string> {
  const text = await readFile(logFile, 'utf8').catch(() => '');
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  const own = lines.filter((l) => l.startsWith('rebound: ')).pop();
  if (own) return own.slice('rebound: '.length);
  const last = lines.pop();
  if (!last) return 'no output';
  try {
    const o = JSON.parse(last) as { msg?: string; err?: { message?: string } };
    return [o.msg, o.err?.message].filter(Boolean).join(': ') || last;
  } catch {
    return last.slice(0, 300);
  }
}

/** Waits for the daemon's ready line; fails with its last words if it exits first. */
export async function waitForReady(d: SpawnedDaemon, deadline: number, pollMs = 50): Promise<ClusterProcess> {
  const { role, id } = d.spec;
  for (;;) {
    const text = await readFile(d.outFile, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const ready = parseReadyLine(line);
      if (ready && ready.id === id) {
        return {
          id,
          role,
          pid: d.pid,
          address: ready.address,
          logFile: d.logFile,
          ...(d.dataDir ? { dataDir: d.dataDir } : {}),
          ...(role === 'taskmanager' ? { slots: d.spec.slots ?? 2 } : {}),
          startedAtMs: Date.now(),
        };
      }
    }
    if (d.spawnError) {
      throw new InternalError(`cannot start ${role} ${id}: ${d.spawnError.message}`);
    }
    if (d.exit || (d.pid > 0 && !isProcessAlive(d.pid))) {
      const how = d.exit?.signal
        ? `was killed by ${d.exit.signal}`
        : d.exit?.code != null
          ? `exited with code ${d.exit.code}`
          : 'exited';
      throw new IllegalStateError(
        `${role} ${id} ${how} before it was ready: ${await lastWords(d.logFile)} (log: ${d.logFile})`,
      );
    }
    if (Date.now() > deadline) {
      throw new UnavailableError(`${role} ${id} was not ready in time; see its log ${d.logFile}`);
    }
    await sleep(pollMs);
  }
}

/** SIGTERM, then SIGKILL whatever is still alive after `graceMs`. Returns how many needed SIGKILL. */
export async function stopProcesses(
  procs: readonly { pid: number; id?: string }[],
  graceMs: number,
): Promise<{ stopped: number; killed: number }> {
  const alive = procs.filter((p) => p.pid > 0 && isProcessAlive(p.pid, p.id));
  for (const p of alive) signalProcess(p.pid, 'SIGTERM');
  const stragglers = await waitForExit(alive, graceMs);
  for (const p of stragglers) signalProcess(p.pid, 'SIGKILL');
  await waitForExit(stragglers, 5_000);
  return { stopped: alive.length, killed: stragglers.length };
}
