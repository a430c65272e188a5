import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ClusterSecurity, Configuration, ErrorCode, ReboundError, errorMessage, sleep, type ClusterOverview__Output } from '@rebound/core';
import { createHaServices, type HighAvailabilityServices, type LeaderInfo } from '@rebound/ha';
import { buildConfiguration, parseDynamicProperties } from './args.js';
import { ClusterClient, clientConfiguration, clientOptionsFrom, type ClusterTarget } from './client.js';
import {
  ClusterPaths,
  nextProcessId,
  readClusterFile,
  tryReadClusterFile,
  upsertProcess,
  withClusterFileLock,
  writeClusterFile,
  type ClusterFile,
  type ClusterProcess,
  type ProcessRole,
} from './cluster-file.js';
import { renderTable } from './format.js';
import { printJson, printLines, type CliIo } from './io.js';
import type { LocalDownOptions, LocalKillLeaderOptions, LocalStartOptions, LocalStartTaskManagerOptions, LocalStatusOptions, LocalUpOptions } from './options.js';
import { isProcessAlive, signalProcess, waitForExit } from './processes.js';
import { spawnDaemon, stopProcesses, waitForReady, type SpawnedDaemon } from './local-spawn.js';

const POLL_MS = 50;

function aliveProcesses(file: ClusterFile): ClusterProcess[] {
  return file.processes.filter((p) => isProcessAlive(p.pid, p.id));
}

function describeProcs(procs: readonly ClusterProcess[]): string {
  return procs.map((p) => `${p.id} pid ${p.pid}`).join(', ');
}

function clusterTargetOf(workdir: string, file: ClusterFile): ClusterTarget {
  return { kind: 'cluster', workdir, haDir: resolve(workdir, file.haDir), file };
}

/** The HA services of a local cluster (its cluster.json names the backend); closed by the caller. */
function haServicesOfFile(workdir: string, file: ClusterFile): HighAvailabilityServices {
  let config = Configuration.empty();
  try {
    config = Configuration.of({ ...file.config });
  } catch {
    // A cluster.json edited by hand with a bad value: the daemons reject it; look with defaults.
  }
  return createHaServices(config, resolve(workdir, file.haDir));
}

async function withLocalHa<T>(workdir: string, file: ClusterFile, fn: (ha: HighAvailabilityServices) => Promise<T>): Promise<T> {
  const ha = haServicesOfFile(workdir, file);
  try {
    return await fn(ha);
  } finally {
    await ha.close();
  }
}

/**
 * A local cluster on etcd gets a key namespace of its own unless one is configured: derived from
 * the work directory, so `local down` then `local up` in the same directory finds its jobs again.
 */
function localClusterId(workdir: string): string {
  return `local-${createHash('sha256').update(workdir).digest('hex').slice(0, 12)}`;
}

/** Polls the leader record until a leader newer than `afterEpoch` and (if given) one of `ids` leads. */
async function waitForLeader(ha: HighAvailabilityServices, deadline: number, accept: (l: LeaderInfo) => boolean): Promise<LeaderInfo> {
  for (;;) {
    let problem = '';
    const leader = await ha.getLeader().catch((err: unknown) => {
      problem = errorMessage(err);
      return undefined;
    });
    if (leader && accept(leader)) return leader;
    if (Date.now() > deadline) {
      throw new ReboundError(
        ErrorCode.LEADER_NOT_FOUND,
        `no JobMaster was elected leader in time (${ha.describe()}: ${leader ? `${leader.jobmasterId}, epoch ${leader.epoch}` : problem || 'no leader recorded'}); see the logs of the JobMasters`,
      );
    }
    await sleep(POLL_MS);
  }
}

/** Polls the leader's cluster overview until every TaskManager in `ids` is registered. */
async function waitForRegistration(client: ClusterClient, ids: readonly string[], deadline: number): Promise<ClusterOverview__Output> {
  let last: ClusterOverview__Output | undefined;
  let lastError = '';
  for (;;) {
    try {
      last = await client.getClusterOverview({ failoverTimeoutMs: Math.max(0, deadline - Date.now()) });
      const registered = new Set(last.task_managers.map((t) => t.task_manager_id));
      if (ids.every((id) => registered.has(id))) return last;
    } catch (err) {
      lastError = errorMessage(err);
    }
    if (Date.now() > deadline) {
      const registered = last?.task_managers.map((t) => t.task_manager_id) ?? [];
      const missing = ids.filter((id) => !registered.includes(id));
      throw new ReboundError(
        ErrorCode.UNAVAILABLE,
        `TaskManagers ${missing.join(', ')} did not register with the leader in time${lastError ? ` (${lastError})` : ''}; see their logs`,
      );
    }
    await sleep(POLL_MS);
  }
}

/**
 * Each daemon of a local cluster gets its own HTTP port: any free one, or, when the cluster's
 * configuration names a port, that port plus the daemon's number minus one (jm-2 gets rest.port + 1).
 */
export function httpPortFor(role: ProcessRole, id: string, config: Readonly<Record<string, string>>): Record<string, string> {
  const key = role === 'jobmaster' ? 'rest.port' : 'metrics.port';
  const base = config[key];
  if (base === undefined || Number(base) === 0) return { [key]: '0' };
  const n = Number(/-(\d+)$/.exec(id)?.[1] ?? 1);
  return { [key]: String(Number(base) + Math.max(0, n - 1)) };
}

/** The REST or metrics URL a daemon published through the HA services (absent for older daemons). */
async function withHttpUrl(ha: HighAvailabilityServices, p: ClusterProcess): Promise<ClusterProcess> {
  const ep = await ha.endpoints().read(p.id).catch(() => undefined);
  if (!ep || ep.pid !== p.pid) return p;
  return { ...p, ...(ep.restUrl ? { restUrl: ep.restUrl } : {}), ...(ep.metricsUrl ? { metricsUrl: ep.metricsUrl } : {}) };
}

async function startDaemons(
  workdir: string,
  file: () => ClusterFile,
  update: (f: ClusterFile) => Promise<void>,
  specs: readonly { role: ProcessRole; id: string; slots?: number; extra?: Record<string, string> }[],
  deadline: number,
  started: SpawnedDaemon[],
): Promise<ClusterProcess[]> {
  const spawned = specs.map((s) =>
    spawnDaemon({
      workdir,
      role: s.role,
      id: s.id,
      haDir: resolve(workdir, file().haDir),
      config: { ...file().config, ...(s.extra ?? {}), ...httpPortFor(s.role, s.id, { ...file().config, ...(s.extra ?? {}) }) },
      ...(s.slots !== undefined ? { slots: s.slots } : {}),
    }),
  );
  started.push(...spawned);
  // Recorded before they are ready, so that `local down` finds them even if this command dies.
  let f = file();
  for (const d of spawned) {
    f = upsertProcess(f, { id: d.spec.id, role: d.spec.role, pid: d.pid, address: '', logFile: d.logFile, ...(d.dataDir ? { dataDir: d.dataDir } : {}), ...(d.spec.slots !== undefined ? { slots: d.spec.slots } : {}), startedAtMs: Date.now() });
  }
  await update(f);
  const ready = await withLocalHa(workdir, file(), (ha) => Promise.all(spawned.map(async (d) => withHttpUrl(ha, await waitForReady(d, deadline)))));
  f = file();
  for (const p of ready) f = upsertProcess(f, p);
  await update(f);
  return ready;
}

/**
 * The dashboard URL to open: with the cluster secret as `?token=` when the cluster has one (the
 * page keeps it in an HttpOnly cookie, as Jupyter's token links do). The secret is printed only here.
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

export async function localUp(opts: LocalUpOptions, io: CliIo): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const config = buildConfiguration({ ...(opts.configFile ? { configFile: resolve(io.cwd, opts.configFile) } : {}), dynamic: opts.dynamic }).toRecord();
  // Closed by default: every RPC of the cluster (and of the CLI, through cluster.json) carries
  // this secret. `-D security.auth.token-file=` (empty) opts out explicitly.
  if (!('security.auth.token-file' in config)) config['security.auth.token-file'] = await ensureSecret(workdir);
  if (config['high-availability.type'] === 'etcd' && !('high-availability.cluster-id' in config)) config['high-availability.cluster-id'] = localClusterId(workdir);
  const deadline = Date.now() + opts.timeoutMs;
  const haDir = ClusterPaths.haDir(workdir);
  await mkdir(haDir, { recursive: true });
  await mkdir(ClusterPaths.logsDir(workdir), { recursive: true });

  return withClusterFileLock(workdir, async () => {
    const existing = await tryReadClusterFile(workdir).catch(() => undefined);
    const running = existing ? aliveProcesses(existing) : [];
    if (running.length > 0) {
      throw new ReboundError(
        ErrorCode.ILLEGAL_STATE,
        `a cluster is already running in ${workdir} (${describeProcs(running)}); stop it with 'rebound local down --workdir ${workdir}' or use another --workdir`,
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
    const client = new ClusterClient(clusterTargetOf(workdir, file), clientOptionsFrom(clientConfiguration(clusterTargetOf(workdir, file))));
    try {
      const jmIds = Array.from({ length: opts.jobmasters }, (_, i) => `jm-${i + 1}`);
      await startDaemons(workdir, () => file, update, jmIds.map((id) => ({ role: 'jobmaster' as const, id })), deadline, started);
      const leader = await waitForLeader(ha, deadline, (l) => l.epoch > previousEpoch && jmIds.includes(l.jobmasterId));
      const tmIds = Array.from({ length: opts.taskmanagers }, (_, i) => `tm-${i + 1}`);
      await startDaemons(workdir, () => file, update, tmIds.map((id) => ({ role: 'taskmanager' as const, id, slots: opts.slots })), deadline, started);
      await waitForRegistration(client, tmIds, deadline);
      const current = (await ha.getLeader()) ?? leader;
      if (opts.json) {
        printJson(io.stdout, { workdir, ...file, leader: current });
      } else {
        printLines(io.stdout, [
          `local cluster up in ${workdir}: ${opts.jobmasters} JobMaster(s), ${opts.taskmanagers} TaskManager(s) with ${opts.slots} slot(s) each`,
          `  HA dir  ${haDir}`,
          ...(ha.type === 'etcd' ? [`  HA      ${ha.describe()}`] : []),
          `  leader  ${current.jobmasterId} (epoch ${current.epoch}) at ${current.address}`,
          `  dashboard  ${dashboardLink(file.processes.find((p) => p.id === current.jobmasterId)?.restUrl, config)}`,
          ...renderTable(
            ['ID', 'ROLE', 'PID', 'ADDRESS', 'HTTP', 'LOG'],
            file.processes.map((p) => [p.id, p.role, String(p.pid), p.address, p.restUrl ?? p.metricsUrl ?? '-', p.logFile]),
          ).map((l) => `  ${l}`),
        ]);
      }
      return 0;
    } catch (err) {
      // Leave nothing half-started behind; the logs stay for the post-mortem.
      await stopProcesses(started.map((d) => ({ pid: d.pid })), 3_000);
      throw new ReboundError(err instanceof ReboundError ? err.code : ErrorCode.INTERNAL, `${errorMessage(err)}; stopped the processes started so far`, { cause: err });
    } finally {
      client.close();
      await ha.close();
    }
  });
}

export async function localDown(opts: LocalDownOptions, io: CliIo): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const file = await readClusterFile(workdir);
  const alive = aliveProcesses(file);
  const { stopped, killed } = await stopProcesses(alive, opts.timeoutMs);
  if (opts.json) {
    printJson(io.stdout, { workdir, stopped: alive.map((p) => p.id), killed });
  } else if (stopped === 0) {
    printLines(io.stdout, [`no process of the cluster in ${workdir} was running`]);
  } else {
    printLines(io.stdout, [`stopped ${stopped} process(es) of the cluster in ${workdir}${killed > 0 ? ` (${killed} needed SIGKILL)` : ''}`]);
  }
  return 0;
}

export interface LocalStatusReport {
  readonly workdir: string;
  readonly haDir: string;
  readonly leader: LeaderInfo | null;
  readonly overviewError?: string;
  readonly processes: readonly (ClusterProcess & { alive: boolean; leader: boolean; registered?: boolean; slotsFree?: number })[];
}

/** What `local status` shows; also used by the test harness. */
export async function localStatusReport(workdir: string): Promise<LocalStatusReport> {
  const file = await readClusterFile(workdir);
  const haDir = resolve(workdir, file.haDir);
  let leaderError: string | undefined;
  const leader =
    (await withLocalHa(workdir, file, (ha) => ha.getLeader()).catch((err: unknown) => {
      leaderError = errorMessage(err);
      return undefined;
    })) ?? null;
  let overview: ClusterOverview__Output | undefined;
  let overviewError: string | undefined = leaderError;
  const leaderProc = leader ? file.processes.find((p) => p.role === 'jobmaster' && p.id === leader.jobmasterId) : undefined;
  if (leader && leaderProc && !isProcessAlive(leaderProc.pid, leaderProc.id)) {
    overviewError = `${leader.jobmasterId} is not running`;
  } else if (leader) {
    const target = clusterTargetOf(workdir, file);
    const client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    try {
      overview = await client.getClusterOverview({ failoverTimeoutMs: 0 });
    } catch (err) {
      overviewError = errorMessage(err);
    } finally {
      client.close();
    }
  }
  const tms = new Map((overview?.task_managers ?? []).map((t) => [t.task_manager_id, t]));
  return {
    workdir,
    haDir,
    leader,
    ...(overviewError !== undefined ? { overviewError } : {}),
    processes: file.processes.map((p) => {
      const alive = isProcessAlive(p.pid, p.id);
      const tm = tms.get(p.id);
      return {
        ...p,
        alive,
        leader: p.role === 'jobmaster' && leader?.jobmasterId === p.id,
        ...(p.role === 'taskmanager' && overview ? { registered: tm !== undefined } : {}),
        ...(tm ? { slotsFree: tm.slots_free } : {}),
      };
    }),
  };
}

export async function localStatus(opts: LocalStatusOptions, io: CliIo): Promise<number> {
  const report = await localStatusReport(resolve(io.cwd, opts.workdir));
  if (opts.json) {
    printJson(io.stdout, report);
    return 0;
  }
  const leaderProc = report.processes.find((p) => p.leader);
  const leaderLine = report.leader
    ? `leader   ${report.leader.jobmasterId} (epoch ${report.leader.epoch}) at ${report.leader.address}${
        leaderProc && !leaderProc.alive
          ? report.processes.some((p) => p.role === 'jobmaster' && p.alive)
            ? ' NOT RUNNING (a standby takes over after the lease timeout)'
            : ' NOT RUNNING (and no other JobMaster runs)'
          : report.overviewError
            ? ` (unreachable: ${report.overviewError})`
            : ''
      }`
    : 'leader   none (no leader.json yet)';
  const registeredCount = report.processes.filter((p) => p.registered).length;
  const tmCount = report.processes.filter((p) => p.role === 'taskmanager').length;
  printLines(io.stdout, [
    `cluster  ${report.workdir}`,
    `HA dir   ${report.haDir}`,
    leaderLine,
    `dashboard ${dashboardLink(leaderProc?.alive && leaderProc.restUrl ? leaderProc.restUrl : report.processes.find((p) => p.role === 'jobmaster' && p.alive && p.restUrl)?.restUrl, (await readClusterFile(report.workdir)).config)}`,
    `TaskManagers registered: ${registeredCount}/${tmCount}`,
    '',
    ...renderTable(
      ['ID', 'ROLE', 'PID', 'ALIVE', 'ADDRESS', 'HTTP', ''],
      report.processes.map((p) => [
        p.id,
        p.role,
        String(p.pid),
        p.alive ? 'yes' : 'no',
        p.address || '-',
        p.restUrl ?? p.metricsUrl ?? '-',
        p.leader ? 'leader' : p.registered ? `registered (${p.slotsFree ?? '?'}/${p.slots ?? '?'} slots free)` : p.role === 'taskmanager' && p.registered === false ? 'not registered' : '',
      ]),
    ),
  ]);
  return 0;
}

export async function localKillLeader(opts: LocalKillLeaderOptions, io: CliIo): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const file = await readClusterFile(workdir);
  const haDir = resolve(workdir, file.haDir);
  const { leader, where } = await withLocalHa(workdir, file, async (ha) => ({ leader: await ha.getLeader(), where: ha.type === 'file' ? `${haDir} (no leader.json)` : ha.describe() }));
  if (!leader) throw new ReboundError(ErrorCode.LEADER_NOT_FOUND, `no leader in ${where}; is the cluster up? see 'rebound local status --workdir ${workdir}'`);
  const proc = file.processes.find((p) => p.role === 'jobmaster' && p.id === leader.jobmasterId);
  if (!proc) {
    throw new ReboundError(ErrorCode.ILLEGAL_STATE, `the leader ${leader.jobmasterId} (epoch ${leader.epoch}) is not a process of the cluster in ${workdir}`);
  }
  if (!isProcessAlive(proc.pid, proc.id)) {
    throw new ReboundError(
      ErrorCode.ILLEGAL_STATE,
      `the leader ${proc.id} (pid ${proc.pid}, epoch ${leader.epoch}) is not running; the HA services name it until a standby takes over after the lease timeout`,
    );
  }
  signalProcess(proc.pid, 'SIGKILL');
  await waitForExit([proc], 5_000);
  if (opts.json) printJson(io.stdout, { id: proc.id, pid: proc.pid, epoch: leader.epoch, address: leader.address });
  else printLines(io.stdout, [String(proc.pid)]);
  return 0;
}

async function startOne(
  role: ProcessRole,
  opts: LocalStartOptions & { slots?: number },
  io: CliIo,
): Promise<{ proc: ClusterProcess; file: ClusterFile; workdir: string }> {
  const workdir = resolve(io.cwd, opts.workdir);
  const extra = parseDynamicProperties(opts.dynamic);
  const deadline = Date.now() + opts.timeoutMs;
  return withClusterFileLock(workdir, async () => {
    let file = await readClusterFile(workdir);
    Configuration.of({ ...file.config, ...extra });
    const id = opts.id ?? nextProcessId(file, role);
    const same = file.processes.find((p) => p.id === id);
    if (same && same.role !== role) throw new ReboundError(ErrorCode.ILLEGAL_STATE, `${id} is a ${same.role} of the cluster in ${workdir}, not a ${role}`);
    if (same && isProcessAlive(same.pid, same.id)) {
      throw new ReboundError(ErrorCode.ILLEGAL_STATE, `${role} ${id} is already running (pid ${same.pid}); kill it first or choose another --id`);
    }
    const started: SpawnedDaemon[] = [];
    const update = async (f: ClusterFile): Promise<void> => {
      file = f;
      await writeClusterFile(workdir, f);
    };
    try {
      const slots = role === 'taskmanager' ? (opts.slots ?? same?.slots ?? file.slots) : undefined;
      const [proc] = await startDaemons(workdir, () => file, update, [{ role, id, ...(slots !== undefined ? { slots } : {}), extra }], deadline, started);
      return { proc: proc!, file, workdir };
    } catch (err) {
      await stopProcesses(started.map((d) => ({ pid: d.pid })), 3_000);
      throw err;
    }
  });
}

function printStarted(io: CliIo, json: boolean, proc: ClusterProcess): void {
  if (json) printJson(io.stdout, proc);
  else printLines(io.stdout, [`started ${proc.role} ${proc.id} (pid ${proc.pid}) at ${proc.address}; log ${proc.logFile}`]);
}

export async function localStartJobMaster(opts: LocalStartOptions, io: CliIo): Promise<number> {
  const { proc } = await startOne('jobmaster', opts, io);
  printStarted(io, opts.json, proc);
  return 0;
}

export async function localStartTaskManager(opts: LocalStartTaskManagerOptions, io: CliIo): Promise<number> {
  const deadline = Date.now() + opts.timeoutMs;
  const { proc, file, workdir } = await startOne('taskmanager', opts, io);
  if (opts.waitRegistered) {
    const target = clusterTargetOf(workdir, file);
    const client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    try {
      await waitForRegistration(client, [proc.id], deadline);
    } finally {
      client.close();
    }
  }
  printStarted(io, opts.json, proc);
  return 0;
}
