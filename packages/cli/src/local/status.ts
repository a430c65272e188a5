import { resolve } from 'node:path';
import { type ClusterOverview__Output, errorMessage } from '@rebound/core';
import { type LeaderInfo } from '@rebound/ha';
import { ClusterClient, clientOptionsFrom } from '../client.js';
import { clientConfiguration } from '../cluster-target.js';
import { readClusterFile, type ClusterProcess } from '../cluster-file.js';
import { renderTable } from '../format.js';
import { printJson, printLines, type CliIo } from '../io.js';
import type { LocalDownOptions, LocalStatusOptions } from '../options.js';
import { isProcessAlive } from '../processes.js';
import { stopProcesses } from '../local-spawn.js';

import { aliveProcesses, clusterTargetOf, shuffleWorkerRegistered, withLocalHa } from './cluster-state.js';

import { plainDashboardLink } from './up.js';

// `rebound local down` and `status`.

export async function localDown(opts: LocalDownOptions, io: CliIo): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const file = await readClusterFile(workdir, []);
  const alive = aliveProcesses(file);
  const { stopped, killed } = await stopProcesses(alive, opts.timeoutMs);
  if (opts.json) {
    printJson(io.stdout, { workdir, stopped: alive.map((p) => p.id), killed });
  } else if (stopped === 0) {
    printLines(io.stdout, [`no process of the cluster in ${workdir} was running`]);
  } else {
    printLines(io.stdout, [
      `stopped ${stopped} process(es) of the cluster in ${workdir}${killed > 0 ? ` (${killed} needed SIGKILL)` : ''}`,
    ]);
  }
  return 0;
}

export interface LocalStatusReport {
  readonly workdir: string;
  readonly haDir: string;
  readonly leader: LeaderInfo | null;
  readonly overviewError?: string;
  readonly processes: readonly (ClusterProcess & {
    alive: boolean;
    leader: boolean;
    registered?: boolean;
    slotsFree?: number;
  })[];
}

/** What `local status` shows; also used by the test harness. */
export async function localStatusReport(workdir: string): Promise<LocalStatusReport> {
  const file = await readClusterFile(workdir, []);
  const haDir = resolve(workdir, file.haDir);
  let leaderError: string | undefined;
  const leader =
    (await withLocalHa(workdir, file, (ha) => ha.getLeader()).catch((err: unknown) => {
      leaderError = errorMessage(err);
      return undefined;
    })) ?? null;
  let overview: ClusterOverview__Output | undefined;
  let overviewError: string | undefined = leaderError;
  const leaderProc = leader
    ? file.processes.find((p) => p.role === 'jobmaster' && p.id === leader.jobmasterId)
    : undefined;
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
    processes: await Promise.all(
      file.processes.map(async (p) => {
        const alive = isProcessAlive(p.pid, p.id);
        const tm = tms.get(p.id);
        return {
          ...p,
          alive,
          leader: p.role === 'jobmaster' && leader?.jobmasterId === p.id,
          ...(p.role === 'taskmanager' && overview ? { registered: tm !== undefined } : {}),
          // A worker says itself whether a leader has it registered (its health).
          ...(p.role === 'shuffle-worker' ? { registered: alive && (await shuffleWorkerRegistered(p.address)) } : {}),
          ...(tm ? { slotsFree: tm.slots_free } : {}),
        };
      }),
    ),
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
  const tmsOnly = report.processes.filter((p) => p.role === 'taskmanager');
  const registeredCount = tmsOnly.filter((p) => p.registered).length;
  const tmCount = tmsOnly.length;
  const workers = report.processes.filter((p) => p.role === 'shuffle-worker');
  printLines(io.stdout, [
    `cluster  ${report.workdir}`,
    `HA dir   ${report.haDir}`,
    leaderLine,
    // Without ?token=: the link with the secret is printed once, by `local up`.
    `dashboard ${plainDashboardLink(leaderProc?.alive && leaderProc.restUrl ? leaderProc.restUrl : report.processes.find((p) => p.role === 'jobmaster' && p.alive && p.restUrl)?.restUrl)}`,
    `TaskManagers registered: ${registeredCount}/${tmCount}`,
    ...(workers.length > 0
      ? [`shuffle workers registered: ${workers.filter((p) => p.registered).length}/${workers.length}`]
      : []),
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
        p.leader
          ? 'leader'
          : p.registered && p.role === 'shuffle-worker'
            ? 'registered'
            : p.registered
              ? `registered (${p.slotsFree ?? '?'}/${p.slots ?? '?'} slots free)`
              : p.role !== 'jobmaster' && p.registered === false
                ? 'not registered'
                : '',
      ]),
    ),
  ]);
  return 0;
}
