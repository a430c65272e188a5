import { ErrorCode, ReboundError } from '@rebound/core';

/**
 * The log holds something a correct writer never writes: a record whose checksum is right but
 * whose type or payload cannot be understood, a file of another job, or an unknown format.
 * Unlike a torn tail this is not explained by a crash, so replay must not guess around it.
 */
export class JobEventStoreCorruptError extends ReboundError {
  constructor(
    /** File name inside the job-events directory. */
    readonly file: string,
    /** Byte offset of the offending record (or 0 for the file header). */
    readonly offset: number,
    readonly detail: string,
    readonly path: string,
    options?: ErrorOptions,
  ) {
    super(ErrorCode.EVENT_STORE_CORRUPT, `job event log corrupt at ${path} offset ${offset}: ${detail}`, options);
  }
}

/** Writing (or reading) the job event log failed for a reason outside the log's content. */
export class JobEventStoreFailedError extends ReboundError {
  constructor(message: string, options?: ErrorOptions) {
    super(ErrorCode.EVENT_STORE_FAILED, message, options);
  }
}

/** A newer JobMaster leads the job: this writer must not touch the log any more. */
export class JobEventStoreFencedError extends ReboundError {
  constructor(
    readonly epoch: number,
    readonly leaderEpoch: number,
  ) {
    super(
      ErrorCode.STALE_EPOCH,
      `job event store of epoch ${epoch} fenced: epoch ${leaderEpoch} leads the job now; recording stopped`,
    );
  }
}

/**
 * Events that each decode, but that a correct writer never records for this job graph: a vertex
 * the graph lacks, a subtask finished before its vertex was initialized. Found when the events are
 * applied after reading, where no file offset is at hand (unlike JobEventStoreCorruptError).
 */
export class JobEventsInconsistentError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.EVENT_STORE_CORRUPT, message);
  }
}
