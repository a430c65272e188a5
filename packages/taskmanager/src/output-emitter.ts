import type { ResultPartitionDeploymentDescriptor__Output } from '@rebound/core';
import { subpartitionOf, type Transformation } from '@rebound/api';
import { DRAIN_BATCH_SIZE, type EventLoopTurns } from './event-loop-turns.js';
import { createKeyedAggregator, type Emit, type KeyedAggregator } from './keyed-reducer.js';
import { keySelectorOf, lookup } from './operator-chain.js';
import type { TaskPartitionWriter } from './shuffle-environment.js';

/**
 * The end of a producing chain: routes records to subpartitions of the task's ResultPartition
 * (hash by key, round-robin, or broadcast), pre-aggregating with the consumer's reduce function
 * when the exchange feeds one (bounded by `taskmanager.network.combiner.max-keys`).
 */
export class OutputEmitter {
  readonly emit: Emit;
  private readonly combiner: KeyedAggregator | undefined;
  private readonly route: Emit;
  recordsOut = 0;

  constructor(
    private readonly writer: Pick<TaskPartitionWriter, 'emit' | 'flushIfNeeded'>,
    desc: ResultPartitionDeploymentDescriptor__Output,
    operators: ReadonlyMap<string, Transformation>,
    private readonly combinerMaxKeys: number,
    private readonly turns: EventLoopTurns,
  ) {
    const n = desc.num_subpartitions;
    switch (desc.distribution) {
      case 'HASH': {
        const key = keySelectorOf(operators, desc.key_selector_id);
        this.route = (r) => {
          this.recordsOut++;
          writer.emit(subpartitionOf(key(r), n), r);
        };
        if (desc.combiner_id) {
          this.combiner = createKeyedAggregator(key, lookup(operators, desc.combiner_id, 'reduce'));
        }
        break;
      }
      case 'BROADCAST':
        this.route = (r) => {
          this.recordsOut++;
          for (let i = 0; i < n; i++) writer.emit(i, r);
        };
        break;
      default: {
        let next = 0;
        this.route = (r) => {
          this.recordsOut++;
          writer.emit(next, r);
          next = (next + 1) % n;
        };
      }
    }
    const combiner = this.combiner;
    this.emit = combiner ? (r) => combiner.add(r) : this.route;
  }

  /** Called between input batches: spill the combiner if it grew too large, wait for the disk. */
  async afterBatch(): Promise<void> {
    if (this.combiner && this.combiner.size > this.combinerMaxKeys) await this.drainCombiner(this.combiner);
    await this.writer.flushIfNeeded();
  }

  async finish(): Promise<void> {
    if (this.combiner) await this.drainCombiner(this.combiner);
    await this.writer.flushIfNeeded();
  }

  /**
   * A combiner holds up to max-keys results: handed out in one go they kept the event loop for
   * seconds (a wordcount producer with 260,000 keys missed its heartbeats and was declared lost),
   * and the partition's buffers grew with them. In batches, with the disk and the heartbeats
   * given their turn in between.
   */
  private async drainCombiner(combiner: KeyedAggregator): Promise<void> {
    for (const batch of combiner.drainBatches(DRAIN_BATCH_SIZE)) {
      for (const r of batch) this.route(r);
      await this.writer.flushIfNeeded();
      await this.turns.maybeYield();
    }
  }
}
