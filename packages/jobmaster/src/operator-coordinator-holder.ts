import { ErrorCode, ReboundError, errorMessage, type Logger, UserCodeError, IllegalStateError } from '@rebound/core';
import {
  NO_CHECKPOINT,
  type OperatorCoordinator,
  type OperatorCoordinatorContext,
  type OperatorCoordinatorProvider,
} from '@rebound/api';

/**
 * Flink's OperatorCoordinatorHolder for user coordinators (`DataSet.process(create, { coordinator })`):
 * owns the user's coordinator on the JobMaster, turns its failures into USER_CODE errors naming
 * the operator, and moves requests, answers and snapshots through JSON.
 */
export class OperatorCoordinatorHolder {
  private coordinator: OperatorCoordinator;
  private readonly ctx: OperatorCoordinatorContext;
  /** Settles once `start()` of the current coordinator did; requests wait for it. */
  private starting: Promise<void> | undefined;

  constructor(
    readonly vertexId: string,
    readonly operatorId: string,
    private readonly operatorName: string,
    private readonly provider: OperatorCoordinatorProvider,
    parallelism: number,
    private readonly logger: Logger,
  ) {
    this.ctx = { operatorId, operatorName, parallelism };
    this.coordinator = this.userCall('creating it', () => provider.create(this.ctx));
  }

  private userCall<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (err) {
      throw this.failure(what, err);
    }
  }

  private failure(what: string, err: unknown): ReboundError {
    if (err instanceof ReboundError && err.code === ErrorCode.USER_CODE) return err;
    return new UserCodeError(
      `coordinator of '${this.operatorName}' (${this.operatorId}): ${what} failed: ${errorMessage(err)}`,
    );
  }

  /** Flink's SupportsBatchSnapshot: a snapshot can be taken and a coordinator rebuilt from it. */
  supportsBatchSnapshot(): boolean {
    return (
      this.coordinator.supportsBatchSnapshot === true &&
      typeof this.coordinator.snapshotState === 'function' &&
      typeof this.provider.restore === 'function'
    );
  }

  /** A running attempt can be kept through a failover: the coordinator is told what it holds. */
  supportsAdoption(): boolean {
    return this.supportsBatchSnapshot() && typeof this.coordinator.subtaskAdopted === 'function';
  }

  /** The coordinator's `subtaskAdopted`, with the responses (JSON) the TaskManager kept for the attempt. */
  subtaskAdopted(subtask: number, attempt: number, responsesJson: readonly string[]): void {
    const responses = this.userCall(`reading the responses kept for subtask ${subtask}`, () =>
      responsesJson.map((j) => JSON.parse(j) as unknown),
    );
    this.userCall(`subtaskAdopted(${subtask})`, () => this.coordinator.subtaskAdopted?.(subtask, attempt, responses));
  }

  start(): Promise<void> {
    const coordinator = this.coordinator;
    this.starting ??= (async () => {
      try {
        await coordinator.start?.();
      } catch (err) {
        throw this.failure('start', err);
      }
    })();
    return this.starting;
  }

  /** Replaces the coordinator with one rebuilt from `state` (a `snapshotNow()`), or a fresh one. */
  async resetToCheckpoint(state: Uint8Array | undefined): Promise<void> {
    await this.close();
    this.coordinator =
      state === undefined
        ? this.userCall('creating it', () => this.provider.create(this.ctx))
        : this.userCall('restoring it from its batch snapshot', () =>
            this.provider.restore!(this.ctx, JSON.parse(Buffer.from(state).toString('utf8')) as unknown),
          );
    await this.start();
  }

  /** The coordinator's `snapshotState(-1)` as JSON bytes (FLIP-383's batch snapshot). */
  snapshotNow(): Uint8Array {
    const state = this.userCall('snapshotState(-1)', () => this.coordinator.snapshotState!(NO_CHECKPOINT));
    const json = JSON.stringify(state);
    if (json === undefined) throw this.failure('snapshotState(-1)', 'it returned a value JSON cannot encode');
    return Buffer.from(json, 'utf8');
  }

  async handleRequest(subtask: number, attempt: number, requestJson: string): Promise<string> {
    let request: unknown;
    try {
      request = JSON.parse(requestJson) as unknown;
    } catch (err) {
      throw new IllegalStateError(`coordination request to ${this.operatorId} is not JSON: ${errorMessage(err)}`);
    }
    await this.start();
    let answer: unknown;
    try {
      answer = await this.coordinator.handleRequest(subtask, attempt, request);
    } catch (err) {
      throw this.failure(`handling a request of subtask ${subtask} (attempt ${attempt})`, err);
    }
    // undefined (a request without an answer) travels as null.
    return JSON.stringify(answer ?? null);
  }

  subtaskReset(subtask: number, nextAttempt: number): void {
    this.userCall(`subtaskReset(${subtask})`, () => this.coordinator.subtaskReset?.(subtask, nextAttempt));
  }

  subtaskFinished(subtask: number, attempt: number): void {
    this.userCall(`subtaskFinished(${subtask})`, () => this.coordinator.subtaskFinished?.(subtask, attempt));
  }

  async close(): Promise<void> {
    const starting = this.starting;
    if (!starting) return;
    this.starting = undefined;
    try {
      await starting;
      await this.coordinator.close?.();
    } catch (err) {
      this.logger.warn({ operatorId: this.operatorId, err: errorMessage(err) }, 'closing a coordinator failed');
    }
  }
}
