/**
 * Flink's OperatorCoordinator: JobMaster-side logic of one operator, talking to its subtasks.
 * Checkpoint id -1 (NO_CHECKPOINT) asks for a batch snapshot (FLIP-383).
 */
export interface OperatorCoordinator {
  readonly operatorId: string;
  start(): Promise<void>;
  close(): Promise<void>;
  /** A subtask's current attempt failed or was reset: what it held goes back. */
  subtaskReset(subtask: number, attempt: number): void;
  /** The subtask's attempt finished: what it held is consumed for good. */
  subtaskFinished(subtask: number, attempt: number): void;
  supportsBatchSnapshot(): boolean;
  checkpointCoordinator(checkpointId: number): Promise<Uint8Array>;
  resetToCheckpoint(checkpointId: number, state: Uint8Array): Promise<void>;
}
