import type { OperatorCoordinatorHolder } from '../operator-coordinator-holder.js';
import type { SourceCoordinator, SplitAnswer } from '../source-coordinator.js';

/**
 * What the JobMaster calls on a source's coordinator; the enumerator inside it is user code. A
 * split request may be answered asynchronously (from the job's worker), so that the JobMaster's
 * thread never waits on an enumerator a reader is asking.
 */
export type SourceCoordinatorApi = Pick<
  SourceCoordinator,
  | 'operatorId'
  | 'vertexName'
  | 'parallelism'
  | 'start'
  | 'close'
  | 'subtaskReset'
  | 'adoptReader'
  | 'canAdoptReader'
  | 'setAttempt'
  | 'subtaskFinished'
  | 'increment'
  | 'supportsBatchSnapshot'
  | 'checkpointCoordinator'
  | 'snapshotNow'
  | 'resetToCheckpoint'
  | 'restore'
> & {
  requestSplit(subtask: number, attempt: number): SplitAnswer | Promise<SplitAnswer>;
};

/** What the JobMaster calls on a user operator coordinator's holder. */
export type CoordinatorHolderApi = Pick<
  OperatorCoordinatorHolder,
  | 'vertexId'
  | 'operatorId'
  | 'supportsBatchSnapshot'
  | 'supportsAdoption'
  | 'subtaskAdopted'
  | 'increment'
  | 'start'
  | 'resetToCheckpoint'
  | 'snapshotNow'
  | 'handleRequest'
  | 'subtaskReset'
  | 'subtaskFinished'
  | 'close'
>;

/** An operator of the job module, as the JobMaster needs to know it. */
export interface UserOperatorInfo {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
  /** A `process` operator with `{ coordinator }`. */
  readonly hasCoordinator: boolean;
}

/** What creating a user coordinator's holder needs. */
export interface CoordinatorHolderSpec {
  readonly vertexId: string;
  readonly operatorId: string;
  readonly operatorName: string;
  readonly parallelism: number;
  /** execution.batch.job-recovery.max-held-coordinator-responses */
  readonly maxHeldResponses: number;
}

/**
 * The user code of one job that runs on the JobMaster: the job module, its split enumerators and
 * operator coordinators. Drivers: `InProcessUserCode` (the JobMaster's own isolate; tests and
 * benchmarks) and `WorkerUserCode` (a worker thread per job, which the daemon uses so that no
 * job can take the JobMaster down).
 */
export interface JobUserCode {
  operator(id: string): UserOperatorInfo | undefined;
  /** The source's `estimateSplits()`; throws UserCodeError when it fails. */
  estimateSplits(operatorId: string): number | undefined;
  createSourceCoordinator(operatorId: string, vertexName: string, parallelism: number): SourceCoordinatorApi;
  createCoordinatorHolder(spec: CoordinatorHolderSpec): CoordinatorHolderApi;
  /**
   * `listener` hears once that the user code can no longer run (its worker exited, crashed, ran
   * out of memory or hung): the job fails with `reason`.
   */
  onFailure(listener: (reason: string) => void): void;
  close(): Promise<void>;
}
