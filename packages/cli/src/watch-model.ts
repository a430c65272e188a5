import type { ClusterOverview__Output, JobStatus__Output } from '@rebound/core';
import type { LeaderAddress } from './client.js';
import { formatDurationMs } from './format.js';
import { recoverySentence } from './recovery-text.js';

/**
 * What `watch` knows about a job and its cluster, built from what it observes: statuses from
 * whichever JobMaster leads, failed calls while none does, and the leader's TaskManager list.
 * Pure (times come with the observations), so every failover path is unit-tested without a
 * cluster; the sinks in progress.ts only draw it.
 */

export type WatchObservation =
  | {
      readonly kind: 'status';
      readonly atMs: number;
      readonly status: JobStatus__Output;
      readonly leader?: LeaderAddress;
    }
  /** No leader answered: the leader died, lost its lease, or leader.json names one not serving yet. */
  | { readonly kind: 'unreachable'; readonly atMs: number; readonly leader?: LeaderAddress; readonly message: string }
  | { readonly kind: 'overview'; readonly atMs: number; readonly overview: ClusterOverview__Output };

/** The time between losing the leader and the job being back under a new one. */
export interface FailoverGap {
  /** The last answer of the old leader. */
  readonly sinceMs: number;
  readonly lostLeader?: LeaderAddress;
  /** Set once leader.json names a newer leader. */
  readonly newLeader?: LeaderAddress;
  readonly electedSeenAtMs?: number;
  /** The new leader answers but has not restored the job yet (CREATED, no vertices). */
  readonly loading: boolean;
}

export interface TaskManagersView {
  /** Registered with the leader of `epoch`. */
  readonly registered: readonly string[];
  readonly epoch: number;
  /** How many were registered before the failover (0: unknown). */
  readonly expected: number;
}

export interface WatchView {
  readonly jobId: string;
  /** The last status that had the job's vertices (a loading leader's empty status never replaces it). */
  readonly status?: JobStatus__Output;
  readonly leader?: LeaderAddress;
  readonly gap?: FailoverGap;
  readonly taskManagers?: TaskManagersView;
  /** When the view was last updated (relative times are drawn against the caller's clock). */
  readonly atMs: number;
}

/** "jm-2 (epoch 2)", "the JobMaster at 127.0.0.1:4711", "the leader". */
export function leaderName(leader: LeaderAddress | undefined): string {
  if (!leader) return 'the leader';
  const epoch = leader.epoch !== undefined ? ` (epoch ${leader.epoch})` : '';
  return leader.jobmasterId ? `${leader.jobmasterId}${epoch}` : `the JobMaster at ${leader.address}${epoch}`;
}

function sameLeader(a: LeaderAddress | undefined, b: LeaderAddress | undefined): boolean {
  return a?.address === b?.address && a?.epoch === b?.epoch;
}

function newer(candidate: LeaderAddress | undefined, than: LeaderAddress | undefined): boolean {
  if (!candidate) return false;
  if (!than) return true;
  if (candidate.epoch !== undefined && than.epoch !== undefined) return candidate.epoch > than.epoch;
  return candidate.address !== than.address;
}

export class WatchModel {
  private status: JobStatus__Output | undefined;
  private leader: LeaderAddress | undefined;
  private gap: FailoverGap | undefined;
  private lastOkAtMs = 0;
  private atMs = 0;
  private taskManagers: TaskManagersView | undefined;
  private tmsBeforeFailover = 0;
  private recoveriesSeen = -1;
  private lastState = '';

  constructor(readonly jobId: string) {}

  view(): WatchView {
    return {
      jobId: this.jobId,
      ...(this.status ? { status: this.status } : {}),
      ...(this.leader ? { leader: this.leader } : {}),
      ...(this.gap ? { gap: this.gap } : {}),
      ...(this.taskManagers ? { taskManagers: this.taskManagers } : {}),
      atMs: this.atMs,
    };
  }

  /** Folds in an observation; returns the events it caused, one line each (for pipes and logs). */
  observe(o: WatchObservation): string[] {
    this.atMs = o.atMs;
    switch (o.kind) {
      case 'status':
        return this.onStatus(o.status, o.atMs, o.leader);
      case 'unreachable':
        return this.onUnreachable(o.atMs, o.leader);
      case 'overview':
        return this.onOverview(o.overview);
    }
  }

  private onStatus(status: JobStatus__Output, atMs: number, leader: LeaderAddress | undefined): string[] {
    const events: string[] = [];
    const first = this.lastOkAtMs === 0;
    if (
      leader &&
      this.leader &&
      !sameLeader(leader, this.leader) &&
      !(this.gap?.newLeader && sameLeader(this.gap.newLeader, leader))
    ) {
      events.push(this.leaderChanged(leader, atMs));
    }
    if (leader) this.leader = leader;
    this.lastOkAtMs = atMs;
    // Once the job ran, CREATED can only be a new leader that has not restored it yet (with no
    // vertices while it loads the module, then all of them CREATED until the replay is applied).
    const loading =
      status.state === 'CREATED' && !first && this.status !== undefined && this.status.state !== 'CREATED';
    if (loading) {
      if (!this.gap?.loading) {
        events.push(`${leaderName(this.leader)} is loading the job from the JobGraphStore`);
        this.gap = {
          ...(this.gap ?? { sinceMs: atMs }),
          loading: true,
          ...(this.leader ? { newLeader: this.leader } : {}),
        };
      }
      return events;
    }
    this.gap = undefined;
    // A terminal job restored from the store may come without vertices: keep the last ones seen.
    this.status = status.vertices.length === 0 && this.status ? { ...status, vertices: this.status.vertices } : status;
    if (status.state !== this.lastState) {
      if (status.state === 'RECONCILING') {
        events.push(
          `RECONCILING under ${leaderName(this.leader)}: replaying the job's event log and asking the TaskManagers which partitions they kept`,
        );
      }
      this.lastState = status.state;
    }
    if (this.recoveriesSeen < 0) this.recoveriesSeen = status.recoveries.length;
    for (let i = this.recoveriesSeen; i < status.recoveries.length; i++)
      events.push(`recovered: ${recoverySentence(status.recoveries[i]!, i, atMs)}`);
    this.recoveriesSeen = Math.max(this.recoveriesSeen, status.recoveries.length);
    return events;
  }

  private onUnreachable(atMs: number, leader: LeaderAddress | undefined): string[] {
    const events: string[] = [];
    if (this.lastOkAtMs === 0) {
      // Not connected yet (a failover under way as watch starts): remember whom leader.json named,
      // so that the leader that answers first is reported as a change if it is another one.
      if (leader && !this.leader) this.leader = leader;
      return events;
    }
    if (!this.gap) {
      this.gap = { sinceMs: this.lastOkAtMs, ...(this.leader ? { lostLeader: this.leader } : {}), loading: false };
      this.tmsBeforeFailover = Math.max(this.tmsBeforeFailover, this.taskManagers?.registered.length ?? 0);
      events.push(`leader lost: ${leaderName(this.leader)} stopped answering; waiting for a standby to take over`);
    }
    const known = this.gap.newLeader ?? this.gap.lostLeader;
    if (leader && newer(leader, known)) {
      this.gap = { ...this.gap, newLeader: leader, electedSeenAtMs: atMs };
      events.push(this.leaderChanged(leader, atMs));
    }
    return events;
  }

  private onOverview(overview: ClusterOverview__Output): string[] {
    const registered = overview.task_managers.map((t) => t.task_manager_id).sort();
    const prev = this.taskManagers;
    if (prev && overview.epoch < prev.epoch) return [];
    if (!prev || overview.epoch === prev.epoch)
      this.tmsBeforeFailover = Math.max(this.tmsBeforeFailover, registered.length);
    this.taskManagers = { registered, epoch: overview.epoch, expected: this.tmsBeforeFailover };
    const changed = !prev || prev.epoch !== overview.epoch || prev.registered.join() !== registered.join();
    if (changed && this.status?.state === 'RECONCILING') {
      return [
        `TaskManagers reported back to epoch ${overview.epoch}: ${registered.join(', ') || 'none yet'} (${registered.length}${this.tmsBeforeFailover ? ` of ${this.tmsBeforeFailover}` : ''})`,
      ];
    }
    return [];
  }

  private leaderChanged(leader: LeaderAddress, atMs: number): string {
    const after =
      this.lastOkAtMs > 0
        ? `, ${formatDurationMs(atMs - this.lastOkAtMs)} after the last answer of the old leader`
        : '';
    // The "leader changed: epoch N at ADDR" prefix is what scripts grep for.
    return `leader changed: epoch ${leader.epoch ?? '?'} at ${leader.address}${leader.jobmasterId ? ` (${leader.jobmasterId})` : ''}${after}`;
  }
}
