import { describe, expect, it } from 'vitest';
import type { ResultPartitionDeploymentDescriptor__Output } from '@rebound/core';
import { buildJob, defineJob } from '@rebound/api';
import { EventLoopTurns } from './event-loop-turns.js';
import { OutputEmitter } from './output-emitter.js';
import type { ResultPartitionWriter } from '@rebound/partition';

/** The operators of a keyed count, and the ids its producer's output descriptor names. */
async function keyedCount(): Promise<{
  operators: Awaited<ReturnType<typeof buildJob>>['operators'];
  keyById: string;
  reduceId: string;
}> {
  const def = defineJob('count', (env) => {
    env
      .generateSequence(0, 9)
      .map((n) => [`k${n}`, 1] as [string, number])
      .keyBy((t) => t[0])
      .sum(1)
      .writeAsText('/tmp/unused');
  });
  const { operators } = await buildJob(def, []);
  const ops = [...operators.values()];
  return {
    operators,
    keyById: ops.find((t) => t.kind === 'keyBy')!.id,
    reduceId: ops.find((t) => t.kind === 'reduce')!.id,
  };
}

describe('OutputEmitter', () => {
  it('hands a large combiner out in batches, letting the event loop run in between', async () => {
    const { operators, keyById, reduceId } = await keyedCount();
    const emitted: unknown[] = [];
    let flushes = 0;
    const writer = {
      emit: (_subpartition: number, r: unknown) => void emitted.push(r),
      flushIfNeeded: async () => void flushes++,
    } as unknown as ResultPartitionWriter;
    const desc = {
      num_subpartitions: 2,
      distribution: 'HASH',
      key_selector_id: keyById,
      combiner_id: reduceId,
    } as unknown as ResultPartitionDeploymentDescriptor__Output;
    // Yield at every chance: whether a turn is due is the clock's business, not this test's.
    const emitter = new OutputEmitter(writer, desc, operators, 1_000_000, new EventLoopTurns(0));
    const KEYS = 10_000;
    for (let i = 0; i < KEYS; i++) emitter.emit([`k${i}`, 1]);
    let ranDuringDrain = false;
    setImmediate(() => (ranDuringDrain = emitted.length > 0 && emitted.length < KEYS));
    await emitter.finish();
    expect(ranDuringDrain).toBe(true);
    expect(emitted).toHaveLength(KEYS);
    expect(flushes).toBeGreaterThan(KEYS / 1024);
    expect(emitter.recordsOut).toBe(KEYS);
  });
});
