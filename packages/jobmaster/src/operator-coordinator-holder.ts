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
  /**
   * Every answer to each subtask's current attempt, JSON, oldest first, recorded with the
   * attempt's finished event: a new leader restored from an older snapshot hands them to
   * `subtaskAdopted` instead of rerunning the subtask. Past `maxHeldResponses` the list is
   * incomplete and the subtask reruns as FLIP-383 does.
   */
  private readonly answered = new Map<number, { attempt: number; json: string[]; complete: boolean }>();

  constructor(
    readonly vertexId: string,
    readonly operatorId: string,
    private readonly operatorName: string,
    private readonly provider: OperatorCoordinatorProvider,
    parallelism: number,
    private readonly logger: Logger,
    /** execution.batch.job-recovery.max-held-coordinator-responses */
    private readonly maxHeldResponses: number,
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

  /**
   * The coordinator's `subtaskAdopted`, with the responses (JSON) the attempt got: kept by its
   * TaskManager (a running attempt) or recorded with its finished event. They are the attempt's
   * answers from now on, for its own finished event.
   */
  subtaskAdopted(subtask: number, attempt: number, responsesJson: readonly string[]): void {
    const responses = this.userCall(`reading the responses kept for subtask ${subtask}`, () =>
      responsesJson.map((j) => JSON.parse(j) as unknown),
    );
    this.answered.set(subtask, { attempt, json: [...responsesJson], complete: true });
    this.userCall(`subtaskAdopted(${subtask})`, () => this.coordinator.subtaskAdopted?.(subtask, attempt, responses));
  }

  /**
   * Every answer `attempt` of `subtask` got, as the increment its finished event records (a JSON
   * array); undefined when they are not all known: more than `maxHeldResponses`, or an attempt
   * this leader neither deployed nor adopted. `deployedHere`: this leader deployed the attempt,
   * so every request of it came here (one without an entry asked nothing).
   */
  increment(subtask: number, attempt: number, deployedHere: boolean): Uint8Array | undefined {
    if (!this.supportsAdoption()) return undefined;
    const entry = this.answered.get(subtask);
    const json = entry?.attempt === attempt ? (entry.complete ? entry.json : undefined) : deployedHere ? [] : undefined;
    return json && Buffer.from(`[${json.join(',')}]`, 'utf8');
  }

  /** The responses of a finished event's increment (see `increment`); undefined when it does not parse. */
  static responsesOfIncrement(state: Uint8Array): string[] | undefined {
    try {
      const responses = JSON.parse(Buffer.from(state).toString('utf8')) as unknown;
      return Array.isArray(responses) ? responses.map((r) => JSON.stringify(r ?? null)) : undefined;
    } catch {
      return undefined;
    }
  }

  private keepAnswer(subtask: number, attempt: number, json: string): void {
    let entry = this.answered.get(subtask);
    if (entry && entry.attempt > attempt) return;
    if (!entry || entry.attempt !== attempt)
      this.answered.set(subtask, (entry = { attempt, json: [], complete: true }));
    if (entry.json.length < this.maxHeldResponses) entry.json.push(json);
    else entry.complete = false;
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
    this.answered.clear();
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
    const json = JSON.stringify(answer ?? null);
    this.keepAnswer(subtask, attempt, json);
    return json;
  }

  subtaskReset(subtask: number, nextAttempt: number): void {
    this.answered.delete(subtask);
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
