import { ReboundError, errorMessage, UserCodeError, IllegalStateError } from '@rebound/core';
import type { Logger } from '@rebound/core';
import {
  NO_CHECKPOINT,
  type Source,
  type SourceSplit,
  type SplitEnumerator,
  type SplitEnumeratorContext,
} from '@rebound/api';
import type { OperatorCoordinator } from './operator-coordinator.js';

export type SplitAnswer = { split: SourceSplit } | { noMoreSplits: true } | { retryAfterMs: number };

interface SubtaskState {
  attempt: number;
  /** Splits handed to the current attempt; consumed for good once it finished. */
  owned: SourceSplit[];
  /** Assignments made while no request was pending; delivered with the next request. */
  queued: SourceSplit[];
  noMoreSplits: boolean;
  registered: boolean;
  finished: boolean;
}

/** What `checkpointCoordinator(-1)` returns (JSON): the enumerator's state plus who owns what. */
export interface SourceCoordinatorSnapshot {
  enumerator: unknown;
  /** Splits owned by each subtask (finished or not) when the snapshot was taken. */
  owned: Record<number, SourceSplit[]>;
}

/**
 * Runs a source's SplitEnumerator on the JobMaster and serves its readers' split requests.
 *
 * For JobMaster-failover recovery it keeps, per subtask, the splits the current attempt owns.
 * A finished subtask's owned splits are written with its ExecutionVertexFinishedEvent (the
 * "increment"), so a finished task never reruns because the last full snapshot is older: on
 * restore, splits consumed by finished subtasks are filtered out of whatever the (older)
 * enumerator state would hand out again.
 */
export class SourceCoordinator implements OperatorCoordinator {
  private enumerator: SplitEnumerator<SourceSplit, unknown> | undefined;
  private readonly subtasks: SubtaskState[];
  /** Ids of splits assigned and not returned: an enumerator assigning one again is a bug. */
  private readonly outstanding = new Set<string>();
  /** Ids consumed by finished subtasks that a restored enumerator may still hold. */
  private readonly consumed = new Set<string>();
  /**
   * Ids consumed when the coordinator was restored: the restored enumerator may still hold a copy.
   * If the consuming subtask is reset, the split also comes back through addSplitsBack, so the
   * enumerator may offer it twice; the copy offered while the other one is assigned is stale.
   */
  private readonly staleCopies = new Set<string>();
  private droppedConsumedSplit = false;

  constructor(
    readonly operatorId: string,
    readonly vertexName: string,
    private readonly source: Source<unknown, SourceSplit, unknown>,
    readonly parallelism: number,
    private readonly logger: Logger,
  ) {
    this.subtasks = Array.from({ length: parallelism }, () => ({
      attempt: 0,
      owned: [],
      queued: [],
      noMoreSplits: false,
      registered: false,
      finished: false,
    }));
  }

  private context(): SplitEnumeratorContext<SourceSplit> {
    return {
      parallelism: this.parallelism,
      assignSplit: (split, subtask) => {
        const st = this.subtaskState(subtask);
        if (this.consumed.has(split.id) || (this.staleCopies.has(split.id) && this.outstanding.has(split.id))) {
          // One copy of a split is gone from the enumerator; at most one was stale.
          this.staleCopies.delete(split.id);
          this.droppedConsumedSplit = true;
          return false;
        }
        if (this.outstanding.has(split.id)) {
          throw new UserCodeError(
            `source '${this.vertexName}': the enumerator assigned split '${split.id}' twice; each split must be assigned once (or returned via addSplitsBack first)`,
          );
        }
        this.outstanding.add(split.id);
        st.queued.push(split);
        return true;
      },
      signalNoMoreSplits: (subtask) => {
        this.subtaskState(subtask).noMoreSplits = true;
      },
    };
  }

  private subtaskState(subtask: number): SubtaskState {
    const st = this.subtasks[subtask];
    if (!st) throw new UserCodeError(`source '${this.vertexName}': no subtask ${subtask}`);
    return st;
  }

  async start(): Promise<void> {
    await this.open(undefined);
  }

  private async open(restoredState: unknown): Promise<void> {
    try {
      this.enumerator =
        restoredState === undefined
          ? await this.source.createEnumerator(this.context())
          : await this.source.restoreEnumerator(this.context(), restoredState);
      await this.enumerator.start();
    } catch (err) {
      throw new UserCodeError(
        `source '${this.vertexName}': creating the split enumerator failed: ${errorMessage(err)}`,
        {
          cause: err,
        },
      );
    }
  }

  async close(): Promise<void> {
    try {
      await this.enumerator?.close();
    } catch (err) {
      this.logger.warn({ err: errorMessage(err), operatorId: this.operatorId }, 'closing the split enumerator failed');
    }
    this.enumerator = undefined;
  }

  /** A reader of `subtask`/`attempt` asks for its next split. */
  requestSplit(subtask: number, attempt: number): SplitAnswer {
    const st = this.subtaskState(subtask);
    if (attempt !== st.attempt) {
      throw new IllegalStateError(`split request from stale attempt ${attempt} of subtask ${subtask}`);
    }
    if (!st.registered) {
      st.registered = true;
      this.callEnumerator('addReader', (e) => e.addReader(subtask));
    }
    // A restored enumerator may hand out consumed splits (assignSplit drops them), so ask
    // again until it gives a fresh one, says there are no more, or has nothing for now.
    for (let guard = 0; st.queued.length === 0 && !st.noMoreSplits && guard < 100_000; guard++) {
      this.droppedConsumedSplit = false;
      this.callEnumerator('handleSplitRequest', (e) => e.handleSplitRequest(subtask));
      if (!this.droppedConsumedSplit) break;
    }
    const next = st.queued.shift();
    if (next) {
      st.owned.push(next);
      return { split: next };
    }
    if (st.noMoreSplits) return { noMoreSplits: true };
    return { retryAfterMs: 100 };
  }

  private callEnumerator(what: string, fn: (e: SplitEnumerator<SourceSplit, unknown>) => void): void {
    if (!this.enumerator) throw new IllegalStateError('the split enumerator is not started');
    try {
      fn(this.enumerator);
    } catch (err) {
      if (err instanceof ReboundError) throw err;
      throw new UserCodeError(`source '${this.vertexName}': ${what} failed: ${errorMessage(err)}`, {
        cause: err,
      });
    }
  }

  /** The subtask gets a new attempt: everything its old attempt owned goes back to the enumerator. */
  subtaskReset(subtask: number, attempt: number): void {
    const st = this.subtaskState(subtask);
    const back = [...st.owned, ...st.queued];
    st.owned = [];
    st.queued = [];
    st.noMoreSplits = false;
    st.registered = false;
    st.finished = false;
    st.attempt = attempt;
    for (const s of back) {
      this.outstanding.delete(s.id);
      this.consumed.delete(s.id);
    }
    if (back.length > 0) {
      this.logger.info(
        { operatorId: this.operatorId, subtask, splits: back.length },
        'returning splits of a reset reader to the enumerator',
      );
      this.callEnumerator('addSplitsBack', (e) => e.addSplitsBack(back, subtask));
    }
  }

  /**
   * After `restore`: the reader `subtask`/`attempt` kept running through the failover (or finished
   * while there was no leader) and holds `splits`. They are its own now and never handed out
   * again: the restored enumerator may still hold them (they were unassigned at snapshot time, or
   * were given back above as owned then), so they count as consumed, and a copy the enumerator
   * offers is dropped. A reset of the reader later returns them as for any other reader.
   */
  adoptReader(subtask: number, attempt: number, splits: readonly SourceSplit[]): void {
    const st = this.subtaskState(subtask);
    st.attempt = attempt;
    st.owned = [...splits];
    st.queued = [];
    st.noMoreSplits = false;
    st.finished = false;
    for (const s of splits) {
      this.consumed.add(s.id);
      this.staleCopies.add(s.id);
      this.outstanding.add(s.id);
    }
  }

  /**
   * Whether a reader that kept running through the failover can be adopted holding `splits`: not
   * when a finished subtask (or a reader adopted before it) consumed one of them. A deposed leader
   * that reset finished work before it learned it no longer led can have handed such a split out
   * again (chaos seed 40, remote shuffle, jobmasters-pause); adopting its reader would read the
   * split twice. Canceled instead, the reader's splits go to readers this leader deploys.
   */
  canAdoptReader(splits: readonly SourceSplit[]): boolean {
    return splits.every((s) => !this.consumed.has(s.id));
  }

  /** Aligns a subtask's expected attempt (after recovery reset its attempts). */
  setAttempt(subtask: number, attempt: number): void {
    this.subtaskState(subtask).attempt = attempt;
  }

  subtaskFinished(subtask: number, _attempt: number): void {
    this.subtaskState(subtask).finished = true;
  }

  /** The splits `subtask`'s current attempt consumed: written with its finished event. */
  increment(subtask: number): Uint8Array {
    return Buffer.from(JSON.stringify(this.subtaskState(subtask).owned));
  }

  supportsBatchSnapshot(): boolean {
    return this.source.supportsBatchSnapshot;
  }

  async checkpointCoordinator(checkpointId: number): Promise<Uint8Array> {
    if (!this.enumerator) throw new IllegalStateError('the split enumerator is not started');
    return this.encodeSnapshot(await this.enumerator.snapshotState(checkpointId));
  }

  /**
   * A batch snapshot taken synchronously, so it is written in order with the event that carries
   * it; undefined when the enumerator can only snapshot asynchronously or failed to.
   */
  snapshotNow(): Uint8Array | undefined {
    if (!this.enumerator || !this.supportsBatchSnapshot()) return undefined;
    try {
      const state = this.enumerator.snapshotState(NO_CHECKPOINT);
      if (state instanceof Promise) {
        state.catch(() => undefined);
        return undefined;
      }
      return this.encodeSnapshot(state);
    } catch (err) {
      this.logger.warn({ operatorId: this.operatorId, err: errorMessage(err) }, 'enumerator snapshot failed');
      return undefined;
    }
  }

  private encodeSnapshot(enumeratorState: unknown): Uint8Array {
    // Every subtask's splits, finished or not: a finished subtask may be reset after the
    // snapshot, and then its splits must come back (see restore).
    const owned: Record<number, SourceSplit[]> = {};
    this.subtasks.forEach((st, i) => {
      if (st.owned.length > 0 || st.queued.length > 0) owned[i] = [...st.owned, ...st.queued];
    });
    const snapshot: SourceCoordinatorSnapshot = { enumerator: enumeratorState ?? null, owned };
    return Buffer.from(JSON.stringify(snapshot));
  }

  async resetToCheckpoint(_checkpointId: number, state: Uint8Array): Promise<void> {
    await this.restore(state, new Map(), new Map());
  }

  /**
   * Restores after a JobMaster failover. `snapshot` is the newest full snapshot (if any); without
   * one the enumerator is created afresh (built-in sources compute their splits deterministically).
   * `finishedOwned` holds, for each subtask whose finished event survived, the splits it consumed.
   *
   * At snapshot time every split was either in the enumerator or owned by some subtask. So the
   * splits to hand out again are: the enumerator's, plus every split owned at snapshot time, minus
   * what finished subtasks consumed (dropped whenever the enumerator offers one).
   */
  async restore(
    snapshot: Uint8Array | undefined,
    finishedOwned: ReadonlyMap<number, SourceSplit[]>,
    attempts: ReadonlyMap<number, number>,
  ): Promise<void> {
    await this.close();
    this.outstanding.clear();
    this.consumed.clear();
    this.staleCopies.clear();
    const parsed = snapshot
      ? (JSON.parse(Buffer.from(snapshot).toString('utf8')) as SourceCoordinatorSnapshot)
      : undefined;
    await this.open(parsed ? parsed.enumerator : undefined);
    for (const splits of finishedOwned.values()) {
      for (const s of splits) {
        this.consumed.add(s.id);
        this.staleCopies.add(s.id);
      }
    }
    this.subtasks.forEach((st, i) => {
      st.queued = [];
      st.noMoreSplits = false;
      st.registered = false;
      st.attempt = attempts.get(i) ?? st.attempt;
      const done = finishedOwned.get(i);
      st.finished = done !== undefined;
      st.owned = done ? [...done] : [];
      for (const s of st.owned) this.outstanding.add(s.id);
    });
    let returned = 0;
    for (const [key, splits] of Object.entries(parsed?.owned ?? {})) {
      const back = splits.filter((s) => !this.consumed.has(s.id));
      returned += back.length;
      if (back.length > 0) this.callEnumerator('addSplitsBack', (e) => e.addSplitsBack(back, Number(key)));
    }
    this.logger.info(
      {
        operatorId: this.operatorId,
        fromSnapshot: parsed !== undefined,
        finishedSubtasks: finishedOwned.size,
        consumedSplits: this.consumed.size,
        returned,
      },
      'source coordinator restored',
    );
  }
}
