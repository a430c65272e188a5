import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import {
  ClusterPaths,
  parseClusterFile,
  readClusterFile,
  tryReadClusterFile,
  upsertProcess,
  withClusterFileLock,
  writeClusterFile,
  type ClusterFile,
  type ClusterProcess,
} from '../cluster-file.js';
import { spawnDaemon, waitForReady } from '../local-spawn.js';
import { isProcessAlive, signalProcess } from '../processes.js';
import { ClusterDriverError, type DaemonOptions } from './cluster-driver-options.js';
import { track } from './live-clusters.js';
import { parseTaskEvents, type TaskEvent } from './task-events.js';
import { waitFor, type WaitOptions } from './wait.js';

/**
 * The daemons of a work directory with the layout of `rebound local`, as its cluster.json records
 * them: read through the product's reader (and written, for daemons started here, through the
 * product's atomic writer under its lock), signalled, and their logs. ClusterDriver adds the CLI
 * and the leader on top.
 */
export class ClusterProcesses {
  readonly workdir: string;
  readonly haDir: string;

  constructor(workdir: string) {
    this.workdir = resolve(workdir);
    this.haDir = ClusterPaths.haDir(this.workdir);
  }

  async processes(): Promise<readonly ClusterProcess[]> {
    return (await readClusterFile(this.workdir)).processes;
  }

  async process(id: string): Promise<ClusterProcess> {
    const p = (await this.processes()).find((x) => x.id === id);
    if (!p) throw new ClusterDriverError(`no process ${id} in ${ClusterPaths.file(this.workdir)}`);
    return p;
  }

  async jobMasterIds(): Promise<string[]> {
    return (await this.processes()).filter((p) => p.role === 'jobmaster').map((p) => p.id);
  }

  async isAlive(processId: string): Promise<boolean> {
    const p = await this.process(processId);
    return isProcessAlive(p.pid, p.id);
  }

  /**
   * Sends `signal` to a daemon of the cluster; false if it was not running. For SIGKILL and
   * SIGTERM, waits until it is gone.
   */
  async signal(processId: string, signal: NodeJS.Signals, opts: WaitOptions = {}): Promise<boolean> {
    return this.signalProcess(await this.process(processId), signal, opts);
  }

  /** signal() to a process record already read (nothing between the caller's clock and the kill). */
  async signalProcess(p: ClusterProcess, signal: NodeJS.Signals, opts: WaitOptions = {}): Promise<boolean> {
    // Never signal a recycled pid: it must still be the daemon started with this id.
    if (!isProcessAlive(p.pid, p.id) || !signalProcess(p.pid, signal)) return false;
    if (signal === 'SIGKILL' || signal === 'SIGTERM') {
      await waitFor(
        () => !isProcessAlive(p.pid, p.id),
        30_000,
        `${p.id} (pid ${p.pid}) to exit after ${signal}`,
        // Often: callers time what follows the kill.
        { intervalMs: 10, ...opts },
      );
    }
    return true;
  }

  /** signal(), but a daemon that is not running is an error. */
  async kill(processId: string, signal: NodeJS.Signals = 'SIGKILL'): Promise<ClusterProcess> {
    const p = await this.process(processId);
    if (!(await this.signal(processId, signal)))
      throw new ClusterDriverError(`cannot send ${signal} to ${processId} (pid ${p.pid}): not running`);
    return p;
  }

  /**
   * Starts a daemon the way `rebound local` does, but through `launcher` (a host of its own),
   * and records it in cluster.json (`base` when there is none yet) under the product's lock.
   */
  async startDaemon(d: DaemonOptions, base: Omit<ClusterFile, 'processes'>): Promise<ClusterProcess> {
    const spawned = spawnDaemon({
      workdir: this.workdir,
      role: d.role,
      id: d.id,
      haDir: this.haDir,
      config: d.config,
      ...(d.slots !== undefined ? { slots: d.slots } : {}),
      ...(d.launcher ? { launcher: d.launcher } : {}),
    });
    track(this);
    const proc = await waitForReady(spawned, d.deadline);
    await withClusterFileLock(this.workdir, async () => {
      const file = (await tryReadClusterFile(this.workdir)) ?? { ...base, processes: [] };
      await writeClusterFile(this.workdir, upsertProcess(file, proc));
    });
    return proc;
  }

  /** Task lifecycle events from the TaskManager logs (all TaskManagers when `tmId` is omitted). */
  async taskEvents(tmId?: string): Promise<TaskEvent[]> {
    const tms = (await this.processes()).filter(
      (p) => p.role === 'taskmanager' && (tmId === undefined || p.id === tmId),
    );
    if (tmId !== undefined && tms.length === 0)
      throw new ClusterDriverError(`no TaskManager ${tmId} in ${this.workdir}`);
    const all = await Promise.all(tms.map(async (p) => parseTaskEvents(await this.readLog(p.logFile), p.id)));
    return all.flat().sort((a, b) => a.time - b.time);
  }

  /** The log of a process (pino JSON lines plus anything it wrote to stderr). */
  log(processId: string): Promise<string> {
    return this.readLog(ClusterPaths.logFile(this.workdir, processId));
  }

  private readLog(path: string): Promise<string> {
    return readFile(path, 'utf8').catch(() => '');
  }

  /** The pino lines of a process's log (JSON objects; other lines and lines cut by a SIGKILL skipped). */
  async logLines(processId: string): Promise<Record<string, unknown>[]> {
    const out: Record<string, unknown>[] = [];
    for (const line of (await this.log(processId)).split('\n')) {
      if (!line.startsWith('{')) continue;
      try {
        out.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        // A line cut by a SIGKILL.
      }
    }
    return out;
  }

  protected processesSync(): readonly ClusterProcess[] {
    const path = ClusterPaths.file(this.workdir);
    try {
      return parseClusterFile(readFileSync(path, 'utf8'), path).processes;
    } catch {
      // No cluster.json: nothing was started.
      return [];
    }
  }

  /** SIGKILLs every process of the cluster, synchronously (exit hooks, a failed stop). */
  killAllSync(): void {
    for (const p of this.processesSync()) if (isProcessAlive(p.pid, p.id)) signalProcess(p.pid, 'SIGKILL');
  }
}
