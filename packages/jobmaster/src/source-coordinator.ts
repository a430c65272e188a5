import { ErrorCode, ReboundError, errorMessage } from '@rebound/core';
import type { Logger } from '@rebound/core';
import type { Source, SourceSplit, SplitEnumerator, SplitEnumeratorContext } from '@rebound/api';
import type { OperatorCoordinator } from './operator-coordinator.js';

export type SplitAnswer = { split: SourceSplit } | { noMoreSplits: true } | { retryAfterMs: number };

interface SubtaskState {
  attempt: number;
  /** Splits handed to the current attempt (returned to the enumerator if it fails). */
  assigned: SourceSplit[];
  /** Assignments made while no request was pending; delivered with the next request. */
  queued: SourceSplit[];
  noMoreSplits: boolean;
  registered: boolean;
}

/**
 * Runs a source's SplitEnumerator on the JobMaster and serves its readers' split requests.
 * Requests are answered from what the enumerator assigned during `handleSplitRequest`; an
 * enumerator that answers later has its assignment queued and the reader asks again.
 */
export class SourceCoordinator implements OperatorCoordinator {
  private enumerator: SplitEnumerator<SourceSplit, unknown> | undefined;
  private readonly subtasks: SubtaskState[];
  private readonly seenSplitIds = new Set<string>();

  constructor(
    readonly operatorId: string,
    readonly vertexName: string,
    private readonly source: Source<unknown, SourceSplit, unknown>,
    private readonly parallelism: number,
    private readonly logger: Logger,
  ) {
    this.subtasks = Array.from({ length: parallelism }, () => ({
      attempt: 0,
      assigned: [],
      queued: [],
      noMoreSplits: false,
      registered: false,
    }));
  }

  private context(): SplitEnumeratorContext<SourceSplit> {
    return {
      parallelism: this.parallelism,
      assignSplit: (split, subtask) => {
        const st = this.subtaskState(subtask);
        if (this.seenSplitIds.has(split.id)) {
          throw new ReboundError(
            ErrorCode.USER_CODE,
            `source '${this.vertexName}': the enumerator assigned split '${split.id}' twice; each split must be assigned once (or returned via addSplitsBack first)`,
          );
        }
        this.seenSplitIds.add(split.id);
        st.queued.push(split);
      },
      signalNoMoreSplits: (subtask) => {
        this.subtaskState(subtask).noMoreSplits = true;
      },
    };
  }

  private subtaskState(subtask: number): SubtaskState {
    const st = this.subtasks[subtask];
    if (!st) throw new ReboundError(ErrorCode.USER_CODE, `source '${this.vertexName}': no subtask ${subtask}`);
    return st;
  }

  async start(restoredState?: unknown): Promise<void> {
    try {
      this.enumerator =
        restoredState === undefined
          ? await this.source.createEnumerator(this.context())
          : await this.source.restoreEnumerator(this.context(), restoredState);
      await this.enumerator.start();
    } catch (err) {
      throw new ReboundError(ErrorCode.USER_CODE, `source '${this.vertexName}': creating the split enumerator failed: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  async close(): Promise<void> {
    try {
      await this.enumerator?.close();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err), operatorId: this.operatorId }, 'closing the split enumerator failed');
    }
  }

  /** A reader of `subtask`/`attempt` asks for its next split. */
  requestSplit(subtask: number, attempt: number): SplitAnswer {
    const st = this.subtaskState(subtask);
    if (attempt !== st.attempt) {
      throw new ReboundError(ErrorCode.ILLEGAL_STATE, `split request from stale attempt ${attempt} of subtask ${subtask}`);
    }
    if (!st.registered) {
      st.registered = true;
      this.callEnumerator('addReader', () => this.enumerator!.addReader(subtask));
    }
    if (st.queued.length === 0 && !st.noMoreSplits) {
      this.callEnumerator('handleSplitRequest', () => this.enumerator!.handleSplitRequest(subtask));
    }
    const next = st.queued.shift();
    if (next) {
      st.assigned.push(next);
      return { split: next };
    }
    if (st.noMoreSplits) return { noMoreSplits: true };
    return { retryAfterMs: 100 };
  }

  private callEnumerator(what: string, fn: () => void): void {
    if (!this.enumerator) throw new ReboundError(ErrorCode.ILLEGAL_STATE, 'the split enumerator is not started');
    try {
      fn();
    } catch (err) {
      if (err instanceof ReboundError) throw err;
      throw new ReboundError(ErrorCode.USER_CODE, `source '${this.vertexName}': ${what} failed: ${errorMessage(err)}`, { cause: err });
    }
  }

  subtaskReset(subtask: number, attempt: number): void {
    const st = this.subtaskState(subtask);
    const back = [...st.assigned, ...st.queued];
    st.assigned = [];
    st.queued = [];
    st.noMoreSplits = false;
    st.registered = false;
    st.attempt = attempt;
    for (const s of back) this.seenSplitIds.delete(s.id);
    if (back.length > 0) {
      this.logger.info({ operatorId: this.operatorId, subtask, splits: back.length }, 'returning splits of a reset reader to the enumerator');
      this.callEnumerator('addSplitsBack', () => this.enumerator!.addSplitsBack(back, subtask));
    }
  }

  subtaskFinished(subtask: number, _attempt: number): void {
    const st = this.subtaskState(subtask);
    st.assigned = [];
  }

  /** Splits the current attempt of `subtask` consumed (recorded with its finished event). */
  assignedSplits(subtask: number): readonly SourceSplit[] {
    return this.subtaskState(subtask).assigned;
  }

  supportsBatchSnapshot(): boolean {
    return this.source.supportsBatchSnapshot;
  }

  async checkpointCoordinator(checkpointId: number): Promise<Uint8Array> {
    if (!this.enumerator) throw new ReboundError(ErrorCode.ILLEGAL_STATE, 'the split enumerator is not started');
    const state = await this.enumerator.snapshotState(checkpointId);
    return Buffer.from(JSON.stringify(state ?? null));
  }

  async resetToCheckpoint(_checkpointId: number, state: Uint8Array): Promise<void> {
    await this.close();
    await this.start(JSON.parse(Buffer.from(state).toString('utf8')));
  }
}
