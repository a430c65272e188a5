import { describe, expect, it } from 'vitest';
import type { ResultPartitionId__Output } from '@rebound/core';
import { ExecutionGraph } from '../execution-graph.js';
import type { PartitionWithMetrics, ShuffleMaster } from '../shuffle/shuffle-master.js';
import { FinishedOutputs } from './finished-outputs.js';
import { PartitionReconciliation } from './partition-reconciliation.js';
import { SOURCE, createRecoveryDir, graphOf, seqSum } from './batch-job-recovery.test-util.js';

/** The seq-sum job with its one source subtask finished on tm-1 (attempt 0, deployed in epoch 1). */
async function finishedSource(): Promise<{ outputs: FinishedOutputs; id: ResultPartitionId__Output }> {
  await createRecoveryDir();
  const graph = new ExecutionGraph((await graphOf(seqSum())).graph);
  const source = graph.vertex(SOURCE);
  graph.initializeVertex(source, 1, [], false);
  const ev = source.vertices[0]!;
  ev.attemptEpoch = 1;
  graph.markFinished(
    ev,
    { task_manager_id: 'tm-1', address: '127.0.0.1:1' },
    { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 8, subpartition_bytes: [8] },
    0,
  );
  // As the TaskManager shuffle keeps a partition: on its producer's TaskManager.
  const shuffleMaster: Pick<ShuffleMaster, 'holdersOf'> = {
    holdersOf: (_job, _partition, at) => [{ kind: 'taskmanager', id: at.task_manager_id, address: at.address }],
  };
  return { outputs: FinishedOutputs.of(graph, shuffleMaster), id: ev.partitionId() };
}

const report = (holder: string, id: ResultPartitionId__Output): PartitionWithMetrics => ({
  holder: { kind: 'taskmanager', id: holder, address: '127.0.0.1:1' },
  partition: { partition_id: id, num_subpartitions: 1, total_bytes: 8, packed_subpartition_bytes: Buffer.alloc(0) },
});

describe('PartitionReconciliation.wait', () => {
  it('says what ended the wait: everything back, every holder settled, or the timeout', async () => {
    const { outputs, id } = await finishedSource();
    const [output] = outputs.needed;
    expect(outputs.needed).toHaveLength(1);

    const back = new PartitionReconciliation(outputs);
    const waiting = back.wait(60_000);
    // A copy on another holder is not the producer's output, and neither is another attempt's or
    // another leader's partition of the same subtask on the right holder: the wait goes on.
    back.add([report('tm-2', id)]);
    back.add([report('tm-1', { ...id, attempt: 1 })]);
    back.add([report('tm-1', { ...id, epoch: 2 })]);
    back.add([report('tm-1', { ...id, job_id: 'another-job' })]);
    expect(back.allNeededReported()).toBe(false);
    expect(back.reportedBy(output!, 'tm-1')).toBe(false);
    back.add([report('tm-1', id)]);
    expect(await waiting).toBe('all-reported');
    expect(back.reportedBy(output!, 'tm-2')).toBe(true);
    expect(back.reportedBy(output!, 'tm-1')).toBe(true);

    let settled = false;
    const gone = new PartitionReconciliation(
      outputs,
      [],
      () => true,
      () => settled,
    );
    const ending = gone.wait(60_000);
    settled = true;
    gone.recheck();
    expect(await ending).toBe('holders-settled');

    expect(await new PartitionReconciliation(outputs).wait(20)).toBe('timeout');
  });
});
