import { ErrorCode, ReboundError, fromServiceError, isTerminalJobState, sleep, type JobStatus__Output } from '@rebound/core';
import type { ClusterClient } from './client.js';
import type { ProgressSink } from './progress.js';

export interface FollowOptions {
  readonly pollIntervalMs: number;
  /** How long to keep trying while no leader answers, or while a new leader does not know the job yet. */
  readonly reconnectTimeoutMs: number;
  readonly signal?: AbortSignal;
}

/** "leader changed: epoch N at ADDR": said once per change by `submit` and `watch`. */
export function leaderChangedMessage(leader: { readonly epoch?: number; readonly address: string }): string {
  return `leader changed: epoch ${leader.epoch ?? '?'} at ${leader.address}`;
}

/**
 * Polls a job's status until it is terminal, feeding every status to `sink`. Survives leader
 * changes: the client re-resolves the leader, and a new leader that has not yet restored the
 * job from the JobGraphStore (JOB_NOT_FOUND right after a failover) is asked again.
 */
export async function followJob(client: ClusterClient, jobId: string, sink: ProgressSink, opts: FollowOptions): Promise<JobStatus__Output> {
  let seen = false;
  let notFoundSince: number | undefined;
  for (;;) {
    let status: JobStatus__Output;
    try {
      status = await client.getJobStatus(jobId, { failoverTimeoutMs: opts.reconnectTimeoutMs });
      notFoundSince = undefined;
    } catch (raw) {
      const err = fromServiceError(raw);
      if (err.code !== ErrorCode.JOB_NOT_FOUND || !seen) throw err;
      notFoundSince ??= Date.now();
      if (Date.now() - notFoundSince > opts.reconnectTimeoutMs) {
        throw new ReboundError(ErrorCode.JOB_NOT_FOUND, `job ${jobId} disappeared: the leader has not known it for ${Math.round(opts.reconnectTimeoutMs / 1000)} s`);
      }
      await sleep(opts.pollIntervalMs, opts.signal);
      continue;
    }
    seen = true;
    sink.update(status);
    if (isTerminalJobState(status.state)) {
      sink.finish();
      return status;
    }
    if (opts.signal?.aborted) {
      sink.finish();
      return status;
    }
    await sleep(opts.pollIntervalMs, opts.signal);
  }
}
