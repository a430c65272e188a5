import { resolve } from 'node:path';
import { Configuration, IllegalStateError } from '@rebound/core';
import { parseDynamicProperties } from '../args.js';
import { ClusterClient, clientOptionsFrom } from '../client.js';
import { clientConfiguration } from '../cluster-target.js';
import {
  nextProcessId,
  readClusterFile,
  withClusterFileLock,
  writeClusterFile,
  type ClusterFile,
  type ClusterProcess,
  type ProcessRole,
} from '../cluster-file.js';

import { printJson, printLines, type CliIo } from '../io.js';
import type { LocalStartOptions, LocalStartShuffleWorkerOptions, LocalStartTaskManagerOptions } from '../options.js';
import { isProcessAlive } from '../processes.js';
import { stopProcesses, type SpawnedDaemon } from '../local-spawn.js';

import { clusterTargetOf, waitForRegistration, waitForShuffleWorkers } from './cluster-state.js';

import { startDaemons } from './up.js';

// `rebound local start-jobmaster`, `start-taskmanager` and `start-shuffle-worker`: one more
// daemon, or one restarted by id.

async function startOne(
  role: ProcessRole,
  opts: LocalStartOptions & { slots?: number },
  io: CliIo,
): Promise<{ proc: ClusterProcess; file: ClusterFile; workdir: string; notes: string[] }> {
  const workdir = resolve(io.cwd, opts.workdir);
  const extra = parseDynamicProperties(opts.dynamic);
  const deadline = Date.now() + opts.timeoutMs;
  return withClusterFileLock(workdir, async () => {
    let file = await readClusterFile(workdir, []);
    Configuration.of({ ...file.config, ...extra });
    const id = opts.id ?? nextProcessId(file, role);
    const same = file.processes.find((p) => p.id === id);
    if (same && same.role !== role)
      throw new IllegalStateError(`${id} is a ${same.role} of the cluster in ${workdir}, not a ${role}`);
    if (same && isProcessAlive(same.pid, same.id)) {
      throw new IllegalStateError(
        `${role} ${id} is already running (pid ${same.pid}); kill it first or choose another --id`,
      );
    }
    const started: SpawnedDaemon[] = [];
    const notes: string[] = [];
    const update = async (f: ClusterFile): Promise<void> => {
      file = f;
      await writeClusterFile(workdir, f);
    };
    try {
      const slots = role === 'taskmanager' ? (opts.slots ?? same?.slots ?? file.slots) : undefined;
      const [proc] = await startDaemons(
        workdir,
        () => file,
        update,
        [{ role, id, ...(slots !== undefined ? { slots } : {}), extra }],
        deadline,
        started,
        notes,
      );
      return { proc: proc!, file, workdir, notes };
    } catch (err) {
      await stopProcesses(
        started.map((d) => ({ pid: d.pid })),
        3_000,
      );
      throw err;
    }
  });
}

function printStarted(io: CliIo, json: boolean, proc: ClusterProcess, notes: readonly string[]): void {
  if (json) printJson(io.stdout, proc);
  else
    printLines(io.stdout, [
      `started ${proc.role} ${proc.id} (pid ${proc.pid}) at ${proc.address}; log ${proc.logFile}`,
      ...notes,
    ]);
}

export async function localStartJobMaster(opts: LocalStartOptions, io: CliIo): Promise<number> {
  const { proc, notes } = await startOne('jobmaster', opts, io);
  printStarted(io, opts.json, proc, notes);
  return 0;
}

export async function localStartTaskManager(opts: LocalStartTaskManagerOptions, io: CliIo): Promise<number> {
  const deadline = Date.now() + opts.timeoutMs;
  const { proc, file, workdir, notes } = await startOne('taskmanager', opts, io);
  if (opts.waitRegistered) {
    const target = clusterTargetOf(workdir, file);
    const client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    try {
      await waitForRegistration(client, [proc.id], deadline);
    } finally {
      client.close();
    }
  }
  printStarted(io, opts.json, proc, notes);
  return 0;
}

/**
 * One more shuffle worker, or one restarted by id: a restarted worker keeps its data directory
 * (`<cluster>/data/<id>`), so it serves the partitions it held before.
 */
export async function localStartShuffleWorker(opts: LocalStartShuffleWorkerOptions, io: CliIo): Promise<number> {
  const deadline = Date.now() + opts.timeoutMs;
  const { proc, notes } = await startOne('shuffle-worker', opts, io);
  if (opts.waitRegistered) await waitForShuffleWorkers([proc], deadline);
  printStarted(io, opts.json, proc, notes);
  return 0;
}
