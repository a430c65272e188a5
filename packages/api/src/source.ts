/**
 * FLIP-27-shaped sources. The SplitEnumerator runs inside the SourceCoordinator on the
 * JobMaster and hands splits to SourceReaders running in tasks, on request.
 *
 * Everything that crosses a process boundary (splits, enumerator state) must be JSON-encodable.
 * Classes of the job module are bundled into the module, so the runtime never relies on
 * `instanceof`: capabilities are plain properties.
 */

/** A unit of source work. `id` must be unique within the source. */
export interface SourceSplit {
  readonly id: string;
}

export interface SplitEnumeratorContext<Split extends SourceSplit> {
  /** Parallelism of the source vertex. */
  readonly parallelism: number;
  /**
   * Answers a pending (or the next) split request of `subtask` with `split`. Returns false when
   * the split was dropped instead: after a JobMaster failover a restored enumerator may offer a
   * split that a finished subtask already consumed; an enumerator may then offer the next one.
   */
  assignSplit(split: Split, subtask: number): boolean | void;
  /** Tells `subtask` that no further splits will come. */
  signalNoMoreSplits(subtask: number): void;
}

export interface SplitEnumerator<Split extends SourceSplit, State> {
  start(): void | Promise<void>;
  /** A reader asks for a split; answer through the context (now or later). */
  handleSplitRequest(subtask: number): void;
  /** Splits of a failed (or reset) reader come back and must be handed out again. */
  addSplitsBack(splits: Split[], subtask: number): void;
  addReader(subtask: number): void;
  /**
   * The enumerator's state. Batch snapshots pass -1 (NO_CHECKPOINT); only enumerators that
   * declare `supportsBatchSnapshot` promise this is valid.
   */
  snapshotState(checkpointId: number): State | Promise<State>;
  close(): void | Promise<void>;
  /** SupportsBatchSnapshot marker. */
  readonly supportsBatchSnapshot?: boolean;
}

/** Marker for enumerators whose `snapshotState(-1)` is valid (Flink's SupportsBatchSnapshot). */
export interface SupportsBatchSnapshot {
  readonly supportsBatchSnapshot: true;
}

export const NO_CHECKPOINT = -1;

export interface SourceReaderContext {
  readonly subtask: number;
  readonly parallelism: number;
  readonly attempt: number;
}

export interface SourceReader<T, Split extends SourceSplit> {
  /** Reads one split to its end, in batches of records. */
  read(split: Split): AsyncIterable<T[]>;
  close?(): void | Promise<void>;
}

export interface Source<T, Split extends SourceSplit = SourceSplit, State = unknown> {
  readonly sourceName: string;
  /** True when the enumerators this source creates implement SupportsBatchSnapshot. */
  readonly supportsBatchSnapshot: boolean;
  /** Number of splits, when known up front (used to pick a default parallelism). */
  estimateSplits?(): number | undefined;
  createEnumerator(
    ctx: SplitEnumeratorContext<Split>,
  ): SplitEnumerator<Split, State> | Promise<SplitEnumerator<Split, State>>;
  restoreEnumerator(
    ctx: SplitEnumeratorContext<Split>,
    state: State,
  ): SplitEnumerator<Split, State> | Promise<SplitEnumerator<Split, State>>;
  createReader(ctx: SourceReaderContext): SourceReader<T, Split>;
}
