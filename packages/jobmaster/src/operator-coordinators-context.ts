import type { Logger } from '@rebound/core';
import type { JobUserCode } from './user-code/job-user-code.js';

/** What the OperatorCoordinators of one job work with. */
export interface OperatorCoordinatorsContext {
  /** The job module's operators: the sources and the user coordinators come from them. */
  readonly userCode: JobUserCode;
  readonly logger: Logger;
  /** execution.batch.job-recovery.max-held-coordinator-responses: answers kept per attempt. */
  readonly maxHeldResponses: number;
  /** A coordinator failed in user code: the job fails (its state is now unknown). */
  onFailure(reason: string): void;
}
