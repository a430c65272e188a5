import {
  ErrorCode,
  fromServiceError,
  isTerminalJobState,
  JobNotFoundError,
  type JobStatus__Output,
  sleep,
  withContext,
} from '@rebound/core';
import type { ClusterClient } from './client.js';
import { ClusterNotFoundError } from './errors.js';
import { formatDurationMs } from './format.js';
import type { ProgressSink } from './progress.js';
import { WatchModel, type WatchObservation } from './watch-model.js';

export interface FollowOptions {
  readonly pollIntervalMs: number;
  /** How long to keep trying while no leader answers, or while a new leader does not know the job yet. */
  readonly reconnectTimeoutMs: number;
  readonly signal?: AbortSignal;
  readonly now?: () => number;
}

/** Errors that mean "no leader serves right now", as opposed to a real failure of the call. */
const LEADERLESS: ReadonlySet<string> = new Set([
  ErrorCode.UNAVAILABLE,
  ErrorCode.NOT_LEADER,
  ErrorCode.LEADER_NOT_FOUND,
]);

/**
 * Polls a job's status until it is terminal, feeding what it sees to a WatchModel and the model's
 * view to `sink`. Each poll is a single attempt (no retry inside the client), so a failover is
 * observed as it happens — the gap, the new leader, RECONCILING — instead of one call blocking
 * through it. While RECONCILING, the leader's TaskManager list shows which ones reported back.
 */
export async function followJob(
  client: ClusterClient,
  jobId: string,
  sink: ProgressSink,
  opts: FollowOptions,
): Promise<JobStatus__Output> {
  const now = opts.now ?? Date.now;
  const model = new WatchModel(jobId);
  const feed = (o: WatchObservation): void => {
    const events = model.observe(o);
    sink.update(model.view(), events);
  };
  let seen = false;
  let notFoundSince: number | undefined;
  let leaderlessSince: number | undefined;
  let overviewEpoch = -1;
  for (;;) {
    let status: JobStatus__Output | undefined;
    try {
      status = await client.getJobStatus(jobId, { failoverTimeoutMs: 0 });
      notFoundSince = undefined;
      leaderlessSince = undefined;
    } catch (raw) {
      const err = fromServiceError(raw);
      if (err.code === ErrorCode.JOB_NOT_FOUND) {
        if (!seen) throw err;
        // A new leader that has not restored the job from the JobGraphStore yet.
        notFoundSince ??= now();
        if (now() - notFoundSince > opts.reconnectTimeoutMs) {
          throw new JobNotFoundError(
            jobId,
            `job ${jobId} disappeared: the leader has not known it for ${Math.round(opts.reconnectTimeoutMs / 1000)} s`,
          );
        }
      } else if (
        LEADERLESS.has(err.code) &&
        !(err instanceof ClusterNotFoundError) &&
        client.target.kind !== 'address'
      ) {
        // Not a failover, so failing at once: no JobMaster of a local cluster alive at all, or
        // --address (one JobMaster, no leader.json to find another).
        leaderlessSince ??= now();
        if (now() - leaderlessSince > opts.reconnectTimeoutMs) {
          throw withContext(
            err,
            `no leader answered for ${formatDurationMs(now() - leaderlessSince)} (${err.message}); see 'rebound local status'`,
          );
        }
        const leader = client.currentLeader();
        feed({ kind: 'unreachable', atMs: now(), message: err.message, ...(leader ? { leader } : {}) });
      } else {
        throw err;
      }
    }
    if (status) {
      seen = true;
      const leader = client.currentLeader();
      const atMs = now();
      const events = model.observe({ kind: 'status', atMs, status, ...(leader ? { leader } : {}) });
      // The TaskManager list once per leader, and on every poll while that leader reconciles.
      if (status.state === 'RECONCILING' || overviewEpoch !== status.leader_epoch) {
        const overview = await client.getClusterOverview({ failoverTimeoutMs: 0 }).catch(() => undefined);
        overviewEpoch = status.leader_epoch;
        if (overview) {
          events.push(...model.observe({ kind: 'overview', atMs, overview }));
        }
      }
      sink.update(model.view(), events);
      if (isTerminalJobState(status.state) || opts.signal?.aborted) {
        sink.finish();
        return status;
      }
    }
    await sleep(opts.pollIntervalMs, opts.signal);
  }
}
