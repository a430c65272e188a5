import { parseDuration, sleep } from '@rebound/core';
import type { EtcdCluster } from '@rebound/ha/testing';
import { CHAOS_CONFIG, HEARTBEAT_TIMEOUT_MS } from './config.js';
import type { FaultPlan } from './faults.js';
import type { RunContext } from './run-context.js';
import type { Disruption } from './task-log.js';

interface LogLine {
  readonly time: number;
  readonly msg?: string;
  readonly taskManagerId?: string;
  readonly reason?: string;
  readonly epoch?: number;
}

function parseLines(text: string): LogLine[] {
  const out: LogLine[] = [];
  for (const l of text.split('\n')) {
    if (!l.startsWith('{')) continue;
    try {
      out.push(JSON.parse(l) as LogLine);
    } catch {
      // A torn last line.
    }
  }
  return out;
}

/**
 * The TaskManagers among `tms` that a heartbeat timeout during a cut (from `from` to `to`, plus
 * the time a heartbeat in flight takes to fail) cost their registration: a JobMaster logged
 * `TaskManager lost` for it, because of its own heartbeat timeout or because the TaskManager,
 * after its heartbeat timeout (`lost the JobMaster`: `no heartbeat answer`), registered again.
 * TCP retransmission backoff makes a cut of 1.5 s look like more than the 3 s heartbeat timeout.
 * Only JobMasters of epoch `minEpoch` or newer count: a cut-off old leader that dropped
 * everybody was replaced, and what it decided binds nobody.
 */
export async function lostByHeartbeat(
  r: RunContext,
  tms: readonly string[],
  from: number,
  to: number,
  minEpoch: number,
): Promise<Set<string>> {
  const until = to + HEARTBEAT_TIMEOUT_MS + parseDuration(CHAOS_CONFIG['rpc.timeout']!, 'rpc.timeout') + 2_000;
  const inWindow = (l: LogLine): boolean => l.time >= from && l.time <= until;
  const lost = new Set<string>();
  const jmLines = (
    await Promise.all((await r.cluster.jobMasterIds()).map(async (id) => parseLines(await r.cluster.log(id))))
  ).flat();
  for (const tm of tms) {
    const tmTimedOut = parseLines(await r.cluster.log(tm)).some(
      (l) => inWindow(l) && l.msg === 'lost the JobMaster' && /^no heartbeat answer/.test(l.reason ?? ''),
    );
    const dropped = jmLines.some(
      (l) =>
        inWindow(l) &&
        l.msg === 'TaskManager lost' &&
        l.taskManagerId === tm &&
        (l.epoch ?? 0) >= minEpoch &&
        (/^no heartbeat/.test(l.reason ?? '') || (l.reason === 'registered again' && tmTimedOut)),
    );
    if (dropped) lost.add(tm);
  }
  return lost;
}

/** After the job: marks the cut's disruption with the TaskManagers a heartbeat timeout cost their registration. */
function judgeCutAfterJob(
  r: RunContext,
  d: Disruption,
  tms: readonly string[],
  from: number,
  to: number,
  minEpoch: number,
  note: (s: string) => void,
): void {
  r.checkAfterJob(`judging "${d.label}"`, async () => {
    const lost = await lostByHeartbeat(r, tms, from, to, minEpoch);
    if (lost.size === 0) return;
    r.amend(d, { ...d, lostOn: lost });
    note(
      `a heartbeat timeout during the cut made the leader drop ${[...lost].join(', ')}: reruns of what finished there are excused`,
    );
  });
}

type NetworkFault = Extract<
  FaultPlan,
  { kind: 'tm-partition' | 'leader-partition' | 'etcd-member-kill' | 'etcd-outage' | 'etcd-leader-partition' }
>;

interface Hooks {
  note(s: string): void;
  mark(at: number): void;
}

/** The index of etcd's Raft leader member, asked of every live member (undefined if none answers). */
export async function raftLeaderIndex(etcd: EtcdCluster): Promise<number | undefined> {
  const members = etcd.members;
  for (const m of members) {
    if (m.pid === undefined) continue;
    try {
      const res = await fetch(`${m.clientUrl}/v3/maintenance/status`, {
        method: 'POST',
        body: '{}',
        signal: AbortSignal.timeout(2_000),
      });
      const body = (await res.json()) as { header?: { member_id?: string }; leader?: string };
      if (!body.leader || body.leader === '0') continue;
      // Each member answers with its own id in the header: find the one whose id is the leader's.
      for (const other of members) {
        if (other.pid === undefined) continue;
        const r2 = await fetch(`${other.clientUrl}/v3/maintenance/status`, {
          method: 'POST',
          body: '{}',
          signal: AbortSignal.timeout(2_000),
        });
        const b2 = (await r2.json()) as { header?: { member_id?: string } };
        if (b2.header?.member_id === body.leader) return members.indexOf(other);
      }
    } catch {
      // A stopped or cut member: ask the next one.
    }
  }
  return undefined;
}

/** Every live JobMaster counts as disturbed: a leader change during an etcd or network fault is caused by it. */
async function disturbJobMasters(r: RunContext, at: number): Promise<void> {
  for (const id of await r.aliveJobMasters()) r.jmDisturbed.push({ id, at });
}

/**
 * Whether a JobMaster's election gave up leadership `epoch`, at any time: a lease that was already
 * failing may run out a moment before the outage starts, and that revocation counts as well.
 */
async function revokedEpoch(r: RunContext, id: string, epoch: number): Promise<boolean> {
  return (await r.cluster.log(id)).split('\n').some((l) => {
    if (!l.includes('"msg":"leadership revoked')) return false;
    try {
      return (JSON.parse(l) as { epoch?: number }).epoch === epoch;
    } catch {
      return false;
    }
  });
}

/**
 * The etcd and network faults (see FAULT_DESCRIPTIONS; what each must leave intact is in
 * packages/chaos/README.md). The trigger has fired when this is called.
 */
export async function injectNetworkFault(r: RunContext, f: NetworkFault, { note, mark }: Hooks): Promise<void> {
  switch (f.kind) {
    case 'tm-partition': {
      const tm = `tm-${f.taskManager}`;
      const net = r.net;
      if (!net) return note('no network cutter (run without --partitions)');
      if (!(await r.cluster.isAlive(tm))) return note(`${tm} was not running`);
      const p = await r.cluster.process(tm);
      const leaderEpoch = (await r.cluster.leader())?.epoch ?? 0;
      if (!net.isInCgroup(p.pid, tm))
        return r.problem(
          'harness-error',
          `${tm} (pid ${p.pid}) is not in its cgroup ${net.root}/${tm}: a cut would not reach it`,
        );
      net.cut(tm);
      const at = Date.now();
      mark(at);
      const d = await r.disrupt(`tm-partition: ${tm} cut off for ${f.durationMs} ms`, at);
      await sleep(f.durationMs);
      net.heal(tm);
      const healedAt = Date.now();
      note(`${tm} cut off for ${healedAt - at} ms`);
      // A heartbeat timeout on either side makes the leader drop the TaskManager and its finished
      // partitions, as after a kill; without one, nothing durable may run again.
      judgeCutAfterJob(r, d, [tm], at, healedAt, leaderEpoch, note);
      return;
    }
    case 'leader-partition': {
      const net = r.net;
      if (!net) return note('no network cutter (run without --partitions)');
      const leader = await r.cluster.leader();
      if (!leader || !(await r.cluster.isAlive(leader.jobmasterId))) return note('no live leader to cut off');
      const id = leader.jobmasterId;
      const p = await r.cluster.process(id);
      if (!net.isInCgroup(p.pid, id))
        return r.problem(
          'harness-error',
          `${id} (pid ${p.pid}) is not in its cgroup ${net.root}/${id}: a cut would not reach it`,
        );
      net.cut(id);
      const at = Date.now();
      mark(at);
      r.jmDisturbed.push({ id, at });
      r.leaderLosses.push({ at, epoch: leader.epoch });
      const d = await r.disrupt(`leader-partition: ${id} (epoch ${leader.epoch}) cut off for ${f.durationMs} ms`, at);
      await sleep(f.durationMs);
      // Asked before the heal: a newer leader elected meanwhile means the old one must be fenced.
      const during = await r.cluster.leader();
      net.heal(id);
      const healedAt = Date.now();
      const replaced = during !== undefined && during.epoch > leader.epoch;
      if (replaced) r.fencingChecks.push({ epoch: leader.epoch, resumedAt: healedAt, id });
      note(
        `${id} cut off for ${healedAt - at} ms; ${replaced ? `${during.jobmasterId} led at epoch ${during.epoch} when it was healed` : 'no newer leader when it was healed'}`,
      );
      const tms = (await r.cluster.processes()).filter((p) => p.role === 'taskmanager').map((p) => p.id);
      judgeCutAfterJob(r, d, tms, at, healedAt, replaced ? during.epoch : leader.epoch, note);
      await r.awaitRecovery(leader.epoch - 1);
      return;
    }
    case 'etcd-member-kill': {
      const etcd = r.etcd;
      if (!etcd) return note('no etcd cluster (run without --ha etcd)');
      const leaderIdx = await raftLeaderIndex(etcd);
      if (leaderIdx === undefined) return note('no etcd member says who leads Raft');
      const victim = f.member === 'leader' ? leaderIdx : (leaderIdx + 1) % etcd.members.length;
      await etcd.killMember(victim);
      const at = Date.now();
      mark(at);
      await disturbJobMasters(r, at);
      await r.disrupt(`etcd-member-kill: SIGKILL etcd member m${victim} (Raft ${f.member})`, at);
      note(
        `killed etcd member m${victim} (Raft ${f.member})${f.restartAfterMs === undefined ? '; not restarted' : `; restarting it after ${f.restartAfterMs} ms`}`,
      );
      if (f.restartAfterMs !== undefined) {
        const after = f.restartAfterMs;
        r.background(`restarting etcd member m${victim}`, async () => {
          await sleep(after);
          await etcd.startMember(victim);
        });
      }
      return;
    }
    case 'etcd-outage': {
      const etcd = r.etcd;
      if (!etcd) return note('no etcd cluster (run without --ha etcd)');
      const leader = await r.cluster.leader();
      const n = etcd.members.length;
      if (f.mode === 'stop') for (let i = 0; i < n; i++) etcd.signalMember(i, 'SIGSTOP');
      else await Promise.all(Array.from({ length: n }, (_, i) => etcd.killMember(i)));
      const at = Date.now();
      mark(at);
      await disturbJobMasters(r, at);
      if (leader) r.leaderLosses.push({ at, epoch: leader.epoch });
      await r.disrupt(`etcd-outage: every etcd member ${f.mode === 'stop' ? 'SIGSTOPped' : 'SIGKILLed'}`, at);
      await sleep(r.leaseMs + 1_000 + f.extraMs);
      // The leader cannot have kept its leadership through an outage longer than its lease.
      const revoked = leader ? await revokedEpoch(r, leader.jobmasterId, leader.epoch) : false;
      if (f.mode === 'stop') for (let i = 0; i < n; i++) etcd.signalMember(i, 'SIGCONT');
      else await Promise.all(Array.from({ length: n }, (_, i) => etcd.startMember(i)));
      note(
        `etcd unavailable for ${Date.now() - at} ms (${f.mode})${leader ? `; ${leader.jobmasterId} ${revoked ? 'gave up its leadership' : 'did NOT give up its leadership'}` : ''}`,
      );
      if (leader && !revoked && (await r.cluster.isAlive(leader.jobmasterId))) {
        r.problem(
          'not-fenced',
          `${leader.jobmasterId} (epoch ${leader.epoch}) kept its leadership through an etcd outage of ${r.leaseMs + 1_000 + f.extraMs} ms, longer than its ${r.leaseMs} ms lease`,
        );
      }
      if (leader) await r.awaitRecovery(leader.epoch);
      return;
    }
    case 'etcd-leader-partition': {
      const etcd = r.etcd;
      const net = r.net;
      if (!etcd || !net) return note('needs --ha etcd and --partitions');
      const idx = await raftLeaderIndex(etcd);
      if (idx === undefined) return note('no etcd member says who leads Raft');
      const target = `etcd-m${idx}`;
      const pid = etcd.members[idx]!.pid;
      // The wrapper script execs etcd: the member's pid is the one that joined the cgroup.
      if (pid === undefined || !net.isInCgroup(pid, target))
        return r.problem(
          'harness-error',
          `etcd member m${idx} (pid ${pid}) is not in its cgroup ${net.root}/${target}`,
        );
      net.cut(target);
      const at = Date.now();
      mark(at);
      await disturbJobMasters(r, at);
      await r.disrupt(`etcd-leader-partition: etcd member m${idx} (Raft leader) cut off for ${f.durationMs} ms`, at);
      await sleep(f.durationMs);
      net.heal(target);
      const next = await raftLeaderIndex(etcd);
      note(`etcd member m${idx} (Raft leader) cut off for ${Date.now() - at} ms; Raft leader now m${next ?? '?'}`);
      return;
    }
  }
}
