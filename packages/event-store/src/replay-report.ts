import type { JobEventType } from './job-event.js';

/**
 * Why the rest of a file was dropped. All three are what a crash in the middle of a write
 * leaves behind (a short write, or blocks the OS had not written yet, which read back as zeros).
 */
export type TornTailReason = 'truncated-header' | 'truncated-record' | 'checksum-mismatch';

export interface TornTail {
  file: string;
  /** Offset of the first discarded byte: the end of the last good record. */
  offset: number;
  /** Bytes from `offset` to the end of the file. */
  bytes: number;
  reason: TornTailReason;
}

/**
 * Where replay stopped because a record could not be read (a torn or corrupt record). The log is
 * a single history: records after a bad one may depend on what it said, so nothing after it —
 * in that file or in any later file — is replayed; the executions it recorded are unknown to the
 * new leader (their tasks rerun, their partitions are released).
 */
export interface ReplayCut {
  /** The file and offset of the first record that could not be read. */
  file: string;
  offset: number;
  reason: TornTailReason;
  /** Bytes not replayed: the rest of that file plus every later file. */
  bytes: number;
  /** Later files not replayed. */
  laterFiles: string[];
  /**
   * True when no record follows the cut in a later file: the tail of the newest file, which is
   * what a crash mid-write leaves. False means history written after the damage (by this or a
   * later JobMaster) is being dropped: damage no crash of the newest writer explains.
   */
  expected: boolean;
}

/**
 * A file written by an older epoch after a newer epoch had already created a file: a fenced
 * JobMaster that raced past its fencing check. Its records are not part of the job's history.
 */
export interface StaleFile {
  file: string;
  epoch: number;
  newerEpoch: number;
  bytes: number;
}

/** Bytes a newer leader's seal cut off a file: what a fenced predecessor appended after it was deposed. */
export interface SealedTail {
  file: string;
  /** The sealed length: bytes from here on are not history. */
  length: number;
  bytes: number;
  /** The file whose header holds the seal. */
  sealedBy: string;
}

export interface EventFileInfo {
  file: string;
  bytes: number;
  /**
   * Bytes of the file that are the replayed history: up to the end of its last good record (0
   * when nothing of it was replayed). What a new leader seals the file at.
   */
  historyBytes: number;
  /** Undefined when the header itself was torn. */
  epoch?: number;
  jobMasterId?: string;
  createdAtMs?: number;
  events: number;
  /**
   * 'discarded': not replayed because an earlier file has a torn or corrupt record (see ReplayCut);
   * 'sealed': a newer leader sealed the whole file out (see SealedTail).
   */
  status: 'complete' | 'torn' | 'stale' | 'corrupt' | 'unread' | 'discarded' | 'sealed';
}

export interface ReplayReport {
  directory: string;
  files: EventFileInfo[];
  events: number;
  eventsPerType: Record<JobEventType, number>;
  /** Total size of the files looked at. */
  bytes: number;
  /** Bytes not replayed: the torn tail and every later file (the recovery report shows this). */
  discardedBytes: number;
  /** At most one: replay stops at the first torn record. */
  tornTails: TornTail[];
  /** Set when replay stopped before the end of the log. */
  cut?: ReplayCut;
  staleFiles: StaleFile[];
  /** Bytes beyond a seal, per file: ignored, never replayed (see seals.ts). */
  sealedTails: SealedTail[];
  sealedBytes: number;
  corruption?: { file: string; offset: number; message: string };
}
