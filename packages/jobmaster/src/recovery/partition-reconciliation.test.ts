import { describe, expect, it } from 'vitest';
import { partitionKey } from '@rebound/core';
import type { PartitionWithMetrics } from '../shuffle/shuffle-master.js';
import { PartitionReconciliation } from './partition-reconciliation.js';

const id = { job_id: 'j', vertex_id: 'v', subtask: 0, attempt: 0, epoch: 1 };
const report = (holder: string): PartitionWithMetrics => ({
  holder: { kind: 'taskmanager', id: holder, address: '127.0.0.1:1' },
  partition: { partition_id: id, num_subpartitions: 1, total_bytes: 8, packed_subpartition_bytes: Buffer.alloc(0) },
});

describe('PartitionReconciliation.wait', () => {
  it('says what ended the wait: everything back, every holder settled, or the timeout', async () => {
    const needed = new Map([[partitionKey(id), ['tm-1']]]);

    const back = new PartitionReconciliation(needed);
    const waiting = back.wait(60_000);
    // A copy on another holder is not the producer's output: the wait goes on.
    back.add([report('tm-2')]);
    back.add([report('tm-1')]);
    expect(await waiting).toBe('all-reported');
    expect(back.reportedBy(partitionKey(id), 'tm-2')).toBe(true);

    let settled = false;
    const gone = new PartitionReconciliation(
      needed,
      [],
      () => true,
      () => settled,
    );
    const ending = gone.wait(60_000);
    settled = true;
    gone.recheck();
    expect(await ending).toBe('holders-settled');

    expect(await new PartitionReconciliation(needed).wait(20)).toBe('timeout');
  });
});
