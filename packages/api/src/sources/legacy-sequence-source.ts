import { SourceStateError } from '../errors.js';
import {
  NO_CHECKPOINT,
  type Source,
  type SourceReader,
  type SplitEnumerator,
  type SplitEnumeratorContext,
} from '../source.js';
import { RangeGeneratorSource, type GeneratorOptions, type RangeSplit } from './generator-sources.js';

/**
 * A sequence source whose enumerator predates batch snapshots (no SupportsBatchSnapshot): it
 * cannot report its state outside a checkpoint, so after a JobMaster failover the runtime must
 * rebuild it from scratch (Flink's fallback for such sources). Exists to exercise that path.
 */
class LegacySequenceEnumerator implements SplitEnumerator<RangeSplit, never> {
  readonly supportsBatchSnapshot = false;
  private readonly queue: RangeSplit[];

  constructor(
    private readonly ctx: SplitEnumeratorContext<RangeSplit>,
    splits: RangeSplit[],
  ) {
    this.queue = splits;
  }

  start(): void {}

  handleSplitRequest(subtask: number): void {
    const split = this.queue.shift();
    if (split) this.ctx.assignSplit(split, subtask);
    else this.ctx.signalNoMoreSplits(subtask);
  }

  addSplitsBack(splits: RangeSplit[]): void {
    this.queue.unshift(...splits);
  }

  addReader(): void {}

  snapshotState(checkpointId: number): never {
    throw new SourceStateError(
      checkpointId === NO_CHECKPOINT
        ? 'LegacySequence: this enumerator does not support batch snapshots (no SupportsBatchSnapshot)'
        : `LegacySequence: checkpoint ${checkpointId}: checkpoints are not supported in batch jobs`,
    );
  }

  close(): void {}
}

export class LegacySequenceSource implements Source<number, RangeSplit, never> {
  readonly sourceName = 'LegacySequence';
  readonly supportsBatchSnapshot = false;
  private readonly inner: RangeGeneratorSource<number>;

  /** from..to, both inclusive. */
  constructor(from: number, to: number, options: GeneratorOptions = {}) {
    this.inner = new RangeGeneratorSource(this.sourceName, from, to + 1, (i) => i, options);
  }

  estimateSplits(): number {
    return this.inner.estimateSplits();
  }

  createEnumerator(ctx: SplitEnumeratorContext<RangeSplit>): SplitEnumerator<RangeSplit, never> {
    return new LegacySequenceEnumerator(ctx, this.inner.splits());
  }

  restoreEnumerator(): SplitEnumerator<RangeSplit, never> {
    throw new SourceStateError(
      'LegacySequence: the enumerator has no snapshot to restore from; create a new one with createEnumerator',
    );
  }

  createReader(): SourceReader<number, RangeSplit> {
    return this.inner.createReader();
  }
}

export function legacySequenceSource(from: number, to: number, options: GeneratorOptions = {}): LegacySequenceSource {
  return new LegacySequenceSource(from, to, options);
}
