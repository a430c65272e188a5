/**
 * User operator coordinators: Flink's OperatorCoordinator with its CoordinationRequestHandler.
 * A coordinator is JobMaster-side logic attached to one operator; the operator's subtasks ask it
 * things with `sendRequestToCoordinator`. Sources have theirs built in (the SourceCoordinator
 * runs the SplitEnumerator); `DataSet.process(create, { coordinator })` attaches any other.
 *
 * Requests, responses and snapshots cross process boundaries: they must be JSON-encodable.
 *
 * JobMaster failover (FLIP-383): a coordinator that declares `supportsBatchSnapshot` is
 * snapshotted with `snapshotState(-1)` when a subtask of its vertex finishes (at most every
 * `execution.batch.job-recovery.snapshot.min-pause`, and always when the vertex finishes); a new
 * leader rebuilds it with `restore` from the newest snapshot and keeps the subtasks that finished
 * before that snapshot. The ones that finished after it are kept too when the coordinator has
 * `subtaskAdopted` (it is handed the answers each got, as recorded with its finished event), and
 * rerun otherwise. Without batch snapshots a vertex that had not finished reruns all its subtasks
 * against a fresh coordinator.
 */

export interface OperatorCoordinatorContext {
  readonly operatorId: string;
  readonly operatorName: string;
  /** Parallelism of the operator's job vertex, as decided. */
  readonly parallelism: number;
}

export interface OperatorCoordinator<Req = unknown, Res = unknown, State = unknown> {
  start?(): void | Promise<void>;
  /**
   * A request of the current attempt of `subtask` (requests of attempts the JobMaster no longer
   * runs are rejected before they get here).
   */
  handleRequest(subtask: number, attempt: number, request: Req): Res | Promise<Res>;
  /** The attempt failed or was reset, and `attempt` runs next: undo what the failed one did. */
  subtaskReset?(subtask: number, attempt: number): void;
  /** The attempt finished: what it did is final. */
  subtaskFinished?(subtask: number, attempt: number): void;
  /**
   * After a JobMaster failover: `attempt` of `subtask` kept running
   * (execution.batch.job-recovery.keep-running-tasks), finished while there was no leader, or
   * finished after the snapshot this coordinator was restored from, and is kept, not rerun.
   * `responses` are all this coordinator's answers to that attempt, oldest first, some perhaps
   * already in that snapshot: take them into the state so that nothing the attempt holds is
   * handed out again. Called before any request is answered. Without this hook (or without batch
   * snapshots) the attempt is canceled or rerun.
   */
  subtaskAdopted?(subtask: number, attempt: number, responses: readonly Res[]): void;
  /** The coordinator's state; only valid for -1 (a batch snapshot) when `supportsBatchSnapshot`. */
  snapshotState?(checkpointId: number): State;
  /** Flink's SupportsBatchSnapshot: `snapshotState(-1)` and the provider's `restore` are valid. */
  readonly supportsBatchSnapshot?: boolean;
  close?(): void | Promise<void>;
}

export interface OperatorCoordinatorProvider<Req = unknown, Res = unknown, State = unknown> {
  create(ctx: OperatorCoordinatorContext): OperatorCoordinator<Req, Res, State>;
  /** Rebuilds a coordinator from its `snapshotState(-1)`; required for batch snapshots. */
  restore?(ctx: OperatorCoordinatorContext, state: State): OperatorCoordinator<Req, Res, State>;
}

export interface ProcessContext<Req = never, Res = never> {
  readonly subtask: number;
  readonly parallelism: number;
  readonly attempt: number;
  /**
   * Asks the operator's coordinator on the JobMaster. Rejects when the operator has none, when
   * the coordinator throws, or when the JobMaster that deployed this attempt is gone (the
   * attempt then fails and a leader reruns it).
   */
  sendRequestToCoordinator(request: Req): Promise<Res>;
}

/**
 * A chained operator that works a batch at a time and may wait (for its coordinator, say).
 * Records pushed into it are buffered for the current input batch and handed over together.
 */
export interface ProcessFunction<T, R, Req = never, Res = never> {
  open?(ctx: ProcessContext<Req, Res>): void | Promise<void>;
  processBatch(records: T[], out: (record: R) => void, ctx: ProcessContext<Req, Res>): void | Promise<void>;
  /** End of input: the last records may be emitted here. */
  close?(out: (record: R) => void, ctx: ProcessContext<Req, Res>): void | Promise<void>;
}
