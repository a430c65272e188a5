import { ErrorCode, ReboundError } from '@rebound/core';

/** A job module that exits, throws or hangs while it loads: the job fails, the JobMaster lives. */
export class PoisonJobModuleError extends ReboundError {
  constructor(jobId: string, reason: string) {
    super(ErrorCode.JOB_MODULE_INVALID, `job ${jobId}: the job module ${reason}; it was not loaded into the JobMaster`);
  }
}

/** An error a call into the job's user-code worker threw there, with its code and message. */
export class RelayedUserCodeError extends ReboundError {
  constructor(code: ErrorCode, message: string) {
    super(code, message);
  }
}
