import { checkHealth, HealthServices, LeaderNotFoundError } from '@rebound/core';
import { ClusterClient, clientOptionsFrom } from './client.js';
import {
  clientConfiguration,
  resolveClusterTarget,
  withHaServices,
  type ClusterTarget,
  type ClusterTargetOptions,
} from './cluster-target.js';
import { formatTimestamp } from './format.js';
import { printJson, printLines, type CliIo } from './io.js';

/** `rebound leader`: which JobMaster leads. */
export interface LeaderOptions extends ClusterTargetOptions {
  readonly json: boolean;
  /** Print only the leader's id (under docker compose: its service name, for `docker compose kill`). */
  readonly idOnly: boolean;
  /** Deadline of the health call that says whether the recorded leader still answers. */
  readonly timeoutMs: number;
}

/** What `rebound leader --json` prints. */
export interface LeaderReport {
  /** The JobMaster's --id; the compose file uses the service name. */
  readonly id: string;
  readonly address: string;
  /** The fencing epoch it leads under. */
  readonly epoch: number;
  /** 0 when asked through --address (only leader.json records it). */
  readonly electedAtMs: number;
  /**
   * Whether its Dispatcher answered the health check as SERVING. false right after the leader
   * died: leader.json names it until a standby takes over, within the lease timeout.
   */
  readonly serving: boolean;
}

async function reportFromHa(
  target: Exclude<ClusterTarget, { kind: 'address' }>,
  timeoutMs: number,
): Promise<LeaderReport> {
  const info = await withHaServices(target, async (ha) => {
    const found = await ha.getLeader();
    if (!found) {
      throw new LeaderNotFoundError(
        ha.type === 'file'
          ? `no JobMaster has been elected in ${target.haDir} yet (no leader.json); is a JobMaster running with --ha-dir ${target.haDir}?`
          : `no JobMaster has been elected in ${ha.describe()} yet; is a JobMaster running with the same high-availability.etcd.endpoints and high-availability.cluster-id?`,
      );
    }
    return found;
  });
  const status = await checkHealth(info.address, HealthServices.dispatcher, timeoutMs).catch(() => undefined);
  return {
    id: info.jobmasterId,
    address: info.address,
    epoch: info.epoch,
    electedAtMs: info.electedAtMs,
    serving: status === 'SERVING',
  };
}

async function reportFromAddress(client: ClusterClient, address: string): Promise<LeaderReport> {
  // A JobMaster answers GetClusterOverview only while it leads; anything else is the error.
  const overview = await client.getClusterOverview({ failoverTimeoutMs: 0 });
  return { id: overview.jobmaster_id, address, epoch: overview.epoch, electedAtMs: 0, serving: true };
}

export function renderLeader(r: LeaderReport): string[] {
  const elected = r.electedAtMs > 0 ? `, elected ${formatTimestamp(r.electedAtMs)}` : '';
  const line = `${r.id} leads at ${r.address} (epoch ${r.epoch}${elected})`;
  if (r.serving) return [line];
  return [
    line,
    'it does not answer: it may have died; a standby takes over once its lease expires (high-availability.lease.timeout)',
  ];
}

export async function leader(opts: LeaderOptions, io: CliIo): Promise<number> {
  const target = await resolveClusterTarget(opts, io.cwd, io.env);
  let report: LeaderReport;
  if (target.kind === 'address') {
    const client = new ClusterClient(target, clientOptionsFrom(clientConfiguration(target)));
    try {
      report = await reportFromAddress(client, target.address);
    } finally {
      client.close();
    }
  } else {
    report = await reportFromHa(target, opts.timeoutMs);
  }
  if (opts.idOnly) printLines(io.stdout, [report.id]);
  else if (opts.json) printJson(io.stdout, report);
  else printLines(io.stdout, renderLeader(report));
  return 0;
}
