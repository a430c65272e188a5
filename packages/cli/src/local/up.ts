import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';

import { resolve } from 'node:path';
import { ClusterSecurity, Configuration, errorMessage, IllegalStateError, withContext } from '@rebound/core';
import { type LeaderInfo } from '@rebound/ha';
import { buildConfiguration } from '../args.js';
import { ClusterClient, clientOptionsFrom } from '../client.js';
import { clientConfiguration } from '../cluster-target.js';
import {
  ClusterPaths,
  tryReadClusterFile,
  upsertProcess,
  withClusterFileLock,
  writeClusterFile,
  type ClusterFile,
  type ClusterProcess,
  type ProcessRole,
} from '../cluster-file.js';
import { renderTable } from '../format.js';
import { printJson, printLines, type CliIo } from '../io.js';
import type { LocalUpOptions } from '../options.js';
import { spawnDaemon, stopProcesses, waitForReady, type SpawnedDaemon } from '../local-spawn.js';

import {
  aliveProcesses,
  clusterTargetOf,
  describeProcs,
  haServicesOfFile,
  localClusterId,
  waitForLeader,
  waitForRegistration,
  waitForShuffleWorkers,
  withLocalHa,
} from './cluster-state.js';
import { REST_PORT_TAKEN, portTakenNote, restPortOrFree, withHttpUrl } from './ports.js';

// `rebound local up`: a secret, the daemons, and the wait until a leader leads every TaskManager.

function recordSpawned(f: ClusterFile, d: SpawnedDaemon): ClusterFile {
  return upsertProcess(f, {
    id: d.spec.id,
    role: d.spec.role,
    pid: d.pid,
    address: '',
    logFile: d.logFile,
    ...(d.dataDir ? { dataDir: d.dataDir } : {}),
    ...(d.spec.slots !== undefined ? { slots: d.spec.slots } : {}),
    startedAtMs: Date.now(),
  });
}

export async function startDaemons(
  workdir: string,
  file: () => ClusterFile,
  update: (f: ClusterFile) => Promise<void>,
  specs: readonly { role: ProcessRole; id: string; slots?: number; extra?: Record<string, string> }[],
  deadline: number,
  started: SpawnedDaemon[],
  notes: string[] = [],
): Promise<ClusterProcess[]> {
  const spawned: SpawnedDaemon[] = [];
  for (const s of specs) {
    const config = { ...file().config, ...(s.extra ?? {}) };
    spawned.push(
      spawnDaemon({
        workdir,
        role: s.role,
        id: s.id,
        haDir: resolve(workdir, file().haDir),
        config: { ...config, ...(await restPortOrFree(s, config, notes)) },
        ...(s.slots !== undefined ? { slots: s.slots } : {}),
      }),
    );
  }
  started.push(...spawned);
  // Recorded before they are ready, so that `local down` finds them even if this command dies.
  let f = file();
  for (const d of spawned) f = recordSpawned(f, d);
  await update(f);
  const readyOrOnFreePort = async (d: SpawnedDaemon): Promise<ClusterProcess> => {
    try {
      return await waitForReady(d, deadline);
    } catch (err) {
      const port = Number(d.spec.config['rest.port'] ?? 0);
      if (d.spec.role !== 'jobmaster' || port === 0 || !REST_PORT_TAKEN.test(errorMessage(err))) throw err;
      // Another process bound the port after it looked free (tests start many clusters at once).
      notes.push(portTakenNote(d.spec.id, port));
      const again = spawnDaemon({ ...d.spec, config: { ...d.spec.config, 'rest.port': '0' } });
      started.push(again);
      await update(recordSpawned(file(), again));
      return waitForReady(again, deadline);
    }
  };
  const ready = await withLocalHa(workdir, file(), (ha) =>
    Promise.all(spawned.map(async (d) => withHttpUrl(ha, await readyOrOnFreePort(d)))),
  );
  f = file();
  for (const p of ready) f = upsertProcess(f, p);
  await update(f);
  return ready;
}

/**
 * The dashboard URL to open: with the cluster secret as `?token=` when the cluster has one (the
 * server exchanges it for a session cookie and the page drops it from the address bar, as
 * Jupyter's token links do). Printed only by `local up`.
 */
function dashboardLink(restUrl: string | undefined, config: Readonly<Record<string, string>>): string {
  if (!restUrl) return '-';
  let query = '';
  try {
    query = ClusterSecurity.of(Configuration.of({ ...config })).dashboardQuery();
  } catch {
    // The secret is unreadable from here: the link without it still names the page.
  }
  return `${restUrl}/${query}`;
}

/** The dashboard URL without the secret (the browser that opened the `local up` link has a session). */
export function plainDashboardLink(restUrl: string | undefined): string {
  return restUrl ? `${restUrl}/` : '-';
}

/** The work directory's cluster secret, created once (32 random bytes, hex, mode 0600). */
async function ensureSecret(workdir: string): Promise<string> {
  const path = ClusterPaths.secret(workdir);
  await mkdir(workdir, { recursive: true });
  try {
    await writeFile(path, `${randomBytes(32).toString('hex')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return path;
}

/** What a leader kill costs with this cluster's configuration, in one line. */
export function recoveryLine(enabled: boolean): string {
  return enabled
    ? 'batch job recovery is on: after a leader kill, jobs go on from the vertices that had finished (FLIP-383)'
    : 'batch job recovery is off: a leader kill reruns every running job from the start; turn it on with -D execution.batch.job-recovery.enabled=true';
}

/** Shuffle workers are there to be used: `shuffle.type: remote` with any, unless -D (or --config) chose. */
export function applyShuffleDefault(config: Record<string, string>, shuffleWorkers: number): void {
  if (shuffleWorkers > 0 && !('shuffle.type' in config)) config['shuffle.type'] = 'remote';
}

/** Where finished partitions are kept with this cluster's configuration, in one line. */
export function shuffleLine(type: string, workers: number): string {
  if (type !== 'remote')
    return `shuffle.type=${type}: partitions stay on the TaskManagers; the ${workers} shuffle worker(s) are not used`;
  return workers > 0
    ? `remote: partitions are written to the ${workers} shuffle worker(s) and outlive the TaskManagers that produced them`
    : "remote, but no shuffle worker runs: producers wait until one is added with 'rebound local start-shuffle-worker'";
}

export async function localUp(opts: LocalUpOptions, io: CliIo): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const config = buildConfiguration({
    ...(opts.configFile ? { configFile: resolve(io.cwd, opts.configFile) } : {}),
    dynamic: opts.dynamic,
  }).toRecord();
  // Closed by default: every RPC of the cluster (and of the CLI, through cluster.json) carries
  // this secret. `-D security.auth.token-file=` (empty) opts out explicitly, and the daemons then
  // refuse to start unless security.auth.allow-unauthenticated is set too (checkAuthenticationPolicy).
  if (!('security.auth.token-file' in config)) config['security.auth.token-file'] = await ensureSecret(workdir);
  applyShuffleDefault(config, opts.shuffleWorkers);
  if (config['high-availability.type'] === 'etcd' && !('high-availability.cluster-id' in config))
    config['high-availability.cluster-id'] = localClusterId(workdir);
  const deadline = Date.now() + opts.timeoutMs;
  const haDir = ClusterPaths.haDir(workdir);
  await mkdir(haDir, { recursive: true });
  await mkdir(ClusterPaths.logsDir(workdir), { recursive: true });

  return withClusterFileLock(workdir, async () => {
    const existing = await tryReadClusterFile(workdir).catch(() => undefined);
    const running = existing ? aliveProcesses(existing) : [];
    if (running.length > 0) {
      throw new IllegalStateError(
        `a cluster is already running in ${workdir} (${describeProcs(running)}); stop it with 'rebound local down --cluster ${workdir}' or use another --cluster`,
      );
    }
    let file: ClusterFile = { haDir, processes: [], config, slots: opts.slots };
    const update = async (f: ClusterFile): Promise<void> => {
      file = f;
      await writeClusterFile(workdir, f);
    };
    await update(file);
    const ha = haServicesOfFile(workdir, file);
    let previous: LeaderInfo | undefined;
    try {
      previous = await ha.getLeader();
    } catch (err) {
      // etcd unreachable: one line now, not a timeout after every daemon failed to start. A
      // damaged leader.json is for the JobMasters to overwrite.
      if (ha.type === 'etcd') {
        await ha.close();
        throw err;
      }
    }
    const previousEpoch = previous?.epoch ?? 0;
    const started: SpawnedDaemon[] = [];
    const client = new ClusterClient(
      clusterTargetOf(workdir, file),
      clientOptionsFrom(clientConfiguration(clusterTargetOf(workdir, file))),
    );
    const notes: string[] = [];
    try {
      const jmIds = Array.from({ length: opts.jobmasters }, (_, i) => `jm-${i + 1}`);
      await startDaemons(
        workdir,
        () => file,
        update,
        jmIds.map((id) => ({ role: 'jobmaster' as const, id })),
        deadline,
        started,
        notes,
      );
      const leader = await waitForLeader(ha, deadline, (l) => l.epoch > previousEpoch && jmIds.includes(l.jobmasterId));
      const tmIds = Array.from({ length: opts.taskmanagers }, (_, i) => `tm-${i + 1}`);
      const swIds = Array.from({ length: opts.shuffleWorkers }, (_, i) => `sw-${i + 1}`);
      const members = await startDaemons(
        workdir,
        () => file,
        update,
        [
          ...swIds.map((id) => ({ role: 'shuffle-worker' as const, id })),
          ...tmIds.map((id) => ({ role: 'taskmanager' as const, id, slots: opts.slots })),
        ],
        deadline,
        started,
      );
      await Promise.all([
        waitForRegistration(client, tmIds, deadline),
        waitForShuffleWorkers(
          members.filter((p) => p.role === 'shuffle-worker'),
          deadline,
        ),
      ]);
      const current = (await ha.getLeader()) ?? leader;
      const recovery = Configuration.of({ ...config }).getBoolean('execution.batch.job-recovery.enabled');
      if (opts.json) {
        printJson(io.stdout, { workdir, ...file, leader: current, jobRecovery: recovery, notes });
      } else {
        printLines(io.stdout, [
          `local cluster up in ${workdir}: ${opts.jobmasters} JobMaster(s), ${opts.taskmanagers} TaskManager(s) with ${opts.slots} slot(s) each${opts.shuffleWorkers > 0 ? `, ${opts.shuffleWorkers} shuffle worker(s)` : ''}`,
          `  HA dir  ${haDir}`,
          ...(ha.type === 'etcd' ? [`  HA      ${ha.describe()}`] : []),
          `  leader  ${current.jobmasterId} (epoch ${current.epoch}) at ${current.address}`,
          `  dashboard  ${dashboardLink(file.processes.find((p) => p.id === current.jobmasterId)?.restUrl, config)}`,
          `  recovery   ${recoveryLine(recovery)}`,
          ...(opts.shuffleWorkers > 0 || config['shuffle.type'] === 'remote'
            ? [`  shuffle    ${shuffleLine(config['shuffle.type'] ?? 'taskmanager', opts.shuffleWorkers)}`]
            : []),
          ...notes.map((n) => `  note       ${n}`),
          ...renderTable(
            ['ID', 'ROLE', 'PID', 'ADDRESS', 'HTTP', 'LOG'],
            file.processes.map((p) => [
              p.id,
              p.role,
              String(p.pid),
              p.address,
              p.restUrl ?? p.metricsUrl ?? '-',
              p.logFile,
            ]),
          ).map((l) => `  ${l}`),
        ]);
      }
      return 0;
    } catch (err) {
      // Leave nothing half-started behind; the logs stay for the post-mortem.
      await stopProcesses(
        started.map((d) => ({ pid: d.pid })),
        3_000,
      );
      throw withContext(err, `${errorMessage(err)}; stopped the processes started so far`);
    } finally {
      client.close();
      await ha.close();
    }
  });
}
