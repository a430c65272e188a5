import type { LeaderInfo } from './leader-info.js';

/**
 * The backend half of leader retrieval (Flink's LeaderRetrievalDriver): how the leader record is
 * read and followed. DefaultLeaderRetrievalService decides what counts as a change and whom to tell.
 */
export interface LeaderRetrievalDriver {
  /** The log line for a failure to follow the record, e.g. "cannot read leader.json". */
  readonly followFailure: string;
  /** The leader record now; undefined when none is recorded. */
  read(): Promise<LeaderInfo | undefined>;
  /** Starts following the record (polling or a watch), reporting to `events` until unfollow(). */
  follow(events: LeaderRetrievalDriverEvents): void;
  unfollow(): void;
  /** Why no leader was found within `timeoutMs`, with the fix; `lastError` is the last failure seen. */
  noLeaderMessage(timeoutMs: number, lastError: string | undefined): string;
}

export interface LeaderRetrievalDriverEvents {
  /** Read the record now (a poll, or a watch that reconnected), reporting a change. */
  refresh(): Promise<unknown>;
  /** A leader record the driver saw (e.g. a watch event). */
  offer(info: LeaderInfo): void;
  error(err: unknown): void;
}
