import { ErrorCode, ReboundError } from '@rebound/core';

/** A problem of the harness itself (a process it could not start, a file it could not damage). */
export class ChaosError extends ReboundError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.INTERNAL, message, options);
  }
}

/** A bad command line: one clear line, exit code 2. */
export class ChaosUsageError extends ReboundError {
  constructor(message: string) {
    super(ErrorCode.CONFIG_INVALID, message);
  }
}
