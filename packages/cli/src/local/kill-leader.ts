import { resolve } from 'node:path';
import { Configuration, errorMessage, IllegalStateError, LeaderNotFoundError, sleep } from '@rebound/core';
import { type LeaderInfo } from '@rebound/ha';
import { readClusterFile, type ClusterFile } from '../cluster-file.js';
import { formatDurationMs } from '../format.js';
import { printJson, printLines, type CliIo } from '../io.js';
import type { LocalKillLeaderOptions } from '../options.js';
import { isProcessAlive, signalProcess, waitForExit } from '../processes.js';

import { withLocalHa } from './cluster-state.js';

// `rebound local kill-leader`: SIGKILL the leader, then say who took over and how long it took.

const SIGNAL = 'SIGKILL';

/** How often the HA services are read while waiting for the takeover; the takeover time itself comes from the record. */
const POLL_MS = 50;

/** The default wait beyond the lease timeout: the standby's poll, its grant, a loaded machine. */
export const KILL_LEADER_WAIT_MARGIN_MS = 20_000;

/** What `local kill-leader --json` prints. */
export interface KillLeaderReport {
  readonly id: string;
  readonly pid: number;
  readonly epoch: number;
  readonly address: string;
  readonly signal: typeof SIGNAL;
  /** When the signal was sent (this host's clock, as the JobMasters'). */
  readonly killedAtMs: number;
  /** Absent with --no-wait; null when nobody took over (no standby runs, or the wait ran out). */
  readonly next?: {
    readonly id: string;
    readonly epoch: number;
    readonly address: string;
    /** From the kill to the new leader's election. */
    readonly takeoverMs: number;
  } | null;
}

/** The default --wait: the cluster's lease timeout (a standby may take over only after it) plus a margin. */
export function defaultKillLeaderWaitMs(file: ClusterFile): number {
  let leaseMs: number;
  try {
    leaseMs = Configuration.of({ ...file.config }).getDurationMs('high-availability.lease.timeout');
  } catch {
    leaseMs = Configuration.empty().getDurationMs('high-availability.lease.timeout');
  }
  return leaseMs + KILL_LEADER_WAIT_MARGIN_MS;
}

export function killedLine(r: KillLeaderReport): string {
  return `killed leader ${r.id} (epoch ${r.epoch}, pid ${r.pid}) with ${r.signal}`;
}

export function nextLeaderLine(next: NonNullable<KillLeaderReport['next']>): string {
  return `${next.id} leads at epoch ${next.epoch} (${next.address}), ${formatDurationMs(next.takeoverMs)} after the kill`;
}

export async function localKillLeader(opts: LocalKillLeaderOptions, io: CliIo): Promise<number> {
  const workdir = resolve(io.cwd, opts.workdir);
  const file = await readClusterFile(workdir, []);
  const haDir = resolve(workdir, file.haDir);
  const { leader, where } = await withLocalHa(workdir, file, async (ha) => ({
    leader: await ha.getLeader(),
    where: ha.type === 'file' ? `${haDir} (no leader.json)` : ha.describe(),
  }));
  if (!leader)
    throw new LeaderNotFoundError(
      `no leader in ${where}; is the cluster up? see 'rebound local status --cluster ${workdir}'`,
    );
  const proc = file.processes.find((p) => p.role === 'jobmaster' && p.id === leader.jobmasterId);
  if (!proc) {
    throw new IllegalStateError(
      `the leader ${leader.jobmasterId} (epoch ${leader.epoch}) is not a process of the cluster in ${workdir}`,
    );
  }
  if (!isProcessAlive(proc.pid, proc.id)) {
    throw new LeaderNotFoundError(
      `no leader to kill: the HA services name ${proc.id} (pid ${proc.pid}, epoch ${leader.epoch}), which is not running; a standby takes over after the lease timeout (see 'rebound local status --cluster ${workdir}')`,
    );
  }
  const killedAtMs = Date.now();
  signalProcess(proc.pid, SIGNAL);
  await waitForExit([proc], 5_000);
  const killed: KillLeaderReport = {
    id: proc.id,
    pid: proc.pid,
    epoch: leader.epoch,
    address: leader.address,
    signal: SIGNAL,
    killedAtMs,
  };
  if (!opts.wait) {
    if (opts.json) printJson(io.stdout, killed);
    else printLines(io.stdout, [killedLine(killed)]);
    return 0;
  }

  const standbys = file.processes.filter(
    (p) => p.role === 'jobmaster' && p.id !== proc.id && isProcessAlive(p.pid, p.id),
  );
  if (standbys.length === 0) {
    if (opts.json) printJson(io.stdout, { ...killed, next: null });
    else
      printLines(io.stdout, [
        killedLine(killed),
        `no other JobMaster runs, so none takes over; start one with 'rebound local start-jobmaster --cluster ${workdir}'`,
      ]);
    return 0;
  }
  const waitMs = opts.waitMs ?? defaultKillLeaderWaitMs(file);
  if (!opts.json) printLines(io.stdout, [killedLine(killed)]);
  const found = await withLocalHa(workdir, file, (ha) =>
    pollNextLeader(() => ha.getLeader(), leader.epoch, killedAtMs + waitMs),
  );
  if (!found.next) {
    if (opts.json) printJson(io.stdout, { ...killed, next: null });
    throw new LeaderNotFoundError(
      `no JobMaster took over within ${formatDurationMs(waitMs)} of the kill (${found.last}); see 'rebound local status --cluster ${workdir}' and the JobMaster logs`,
    );
  }
  const next = {
    id: found.next.jobmasterId,
    epoch: found.next.epoch,
    address: found.next.address,
    // The new leader stamps its election with the same host clock: exact, unlike the poll.
    takeoverMs: Math.max(0, found.next.electedAtMs - killedAtMs),
  };
  if (opts.json) printJson(io.stdout, { ...killed, next });
  else printLines(io.stdout, [nextLeaderLine(next)]);
  return 0;
}

/** Reads the leader record until one newer than `afterEpoch` appears or `deadline` passes. */
async function pollNextLeader(
  read: () => Promise<LeaderInfo | undefined>,
  afterEpoch: number,
  deadline: number,
): Promise<{ next?: LeaderInfo; last: string }> {
  let last = 'no leader recorded';
  for (;;) {
    try {
      const l = await read();
      if (l && l.epoch > afterEpoch) return { next: l, last };
      if (l) last = `the HA services still name ${l.jobmasterId}, epoch ${l.epoch}`;
    } catch (err) {
      last = errorMessage(err);
    }
    if (Date.now() >= deadline) return { last };
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())));
  }
}
