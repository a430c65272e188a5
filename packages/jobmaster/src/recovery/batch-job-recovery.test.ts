import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { defineJob, type OperatorCoordinator, type OperatorCoordinatorProvider } from '@rebound/api';
import type { JobStatus } from '@rebound/core';
import { until } from '../testing/fake-task-manager.js';
import {
  InProcessLeaders,
  finish,
  retainedPartitionOf,
  type Deployment,
  type Leader,
} from '../testing/in-process-leaders.js';
import {
  RECONCILE,
  SMALL_TASKS,
  SOURCE,
  committedLines,
  createRecoveryDir,
  dir,
  finishSink,
  graphOf,
  out,
  runSources,
  seqSum,
  writeSinkFile,
} from './batch-job-recovery.test-util.js';

/**
 * Recovery in one process, as Flink's BatchJobRecoveryTest does it: successive JobMasters on one
 * real event store, TaskManagers stood in for by a fake gateway. A leader "dies" by flushing what
 * it wrote and stopping; the next one replays and reconciles.
 */

interface IdRequest {
  readonly count: number;
}
interface IdBlock {
  readonly start: number;
  readonly count: number;
}

/** examples/unique-ids.ts's coordinator: hands out blocks of ids, snapshot = the next id. */
class IdBlocks implements OperatorCoordinator<IdRequest, IdBlock, { next: number }> {
  readonly supportsBatchSnapshot = true;
  constructor(protected next: number) {}
  handleRequest(_subtask: number, _attempt: number, r: IdRequest): IdBlock {
    const block = { start: this.next, count: r.count };
    this.next += r.count;
    return block;
  }
  snapshotState(): { next: number } {
    return { next: this.next };
  }
}
const idBlocks: OperatorCoordinatorProvider<IdRequest, IdBlock, { next: number }> = {
  create: () => new IdBlocks(0),
  restore: (_ctx, state) => new IdBlocks(state.next),
};

/** The same, told what a subtask kept after a failover got (`subtaskAdopted`). */
class AdoptingIdBlocks extends IdBlocks {
  subtaskAdopted(_subtask: number, _attempt: number, blocks: readonly IdBlock[]): void {
    for (const b of blocks) this.next = Math.max(this.next, b.start + b.count);
  }
}

/** One vertex: a sequence source numbered by `coordinator` and written as text. */
function uniqueIds(coordinator: OperatorCoordinatorProvider<IdRequest, IdBlock, { next: number }>) {
  return defineJob('unique-ids', (env) => {
    env
      .generateSequence(0, 99, { splitSize: 34 })
      .process(() => ({ processBatch: () => {} }), { coordinator })
      .writeAsText(out);
  });
}
const V = 'v-op-1';

/** Runs subtask `d`: takes a block of 100 ids from the coordinator and writes them as its output. */
async function numberLines(l: Leader, d: Deployment): Promise<void> {
  const res = await l.job.handleCoordinationRequest({
    epoch: d.tdd.epoch,
    execution: d.tdd.execution,
    operator_id: 'op-2',
    request_json: JSON.stringify({ count: 100 }),
  });
  const block = JSON.parse(res.response_json ?? 'null') as IdBlock;
  await writeSinkFile(d, Array.from({ length: block.count }, (_, i) => `${block.start + i}`).join('\n') + '\n');
}
const subtask = (d: Deployment) => d.tdd.execution!.subtask;
const bySubtask = (ds: Deployment[]) => ds.sort((x, y) => subtask(x) - subtask(y));

describe('batch job recovery in one process', () => {
  let leaders: InProcessLeaders | undefined;

  beforeEach(createRecoveryDir);
  afterEach(async () => {
    await leaders?.close();
    leaders = undefined;
  });

  /*
   * The three-leader scenario of issue 9. Leader 1 records V#1 finished after snapshot S1; leader 2
   * drops it (no snapshot covers it) and reruns it, while V#2 finishes with snapshot S2 and is
   * handed the ids V#1's first attempt had (the coordinator was restored to S1); leader 2 dies.
   * Leader 3 sees V#1's old finished event before S2: unless leader 2 recorded the drop as a
   * reset, V#1's old output comes back and the job commits duplicate ids.
   */
  it('an execution dropped at replay is recorded as reset, so a third leader does not resurrect it', async () => {
    const { graph, operators } = await graphOf(uniqueIds(idBlocks));
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);

    const l1 = await leaders.elect();
    await until(() => l1.gateway.of(V).length === 3, 'leader 1 to deploy three subtasks');
    const [a0, a1, a2] = l1.gateway.of(V).sort((x, y) => subtask(x) - subtask(y));
    await numberLines(l1, a0!);
    finish(l1.job, a0!); // carries snapshot S1 (the operator's first)
    await numberLines(l1, a1!);
    finish(l1.job, a1!); // within the snapshot pause: no snapshot covers it
    await numberLines(l1, a2!); // running when leader 1 dies
    await leaders.kill(l1);

    const l2 = await leaders.elect();
    await until(() => l2.gateway.of(V).length === 2, 'leader 2 to rerun V#1 and V#2');
    expect(l2.recoveries.at(-1)).toMatchObject({ executions_recovered: 1, executions_reset: 1 });
    const b2 = l2.gateway.of(V).find((d) => subtask(d) === 2)!;
    await numberLines(l2, b2);
    finish(l2.job, b2); // carries snapshot S2
    await leaders.kill(l2); // V#1's rerun never finished

    const l3 = await leaders.elect();
    expect(l3.job.graph.executionVertex(V, 1)!.state).not.toBe('FINISHED');
    await until(() => l3.gateway.of(V).length === 1, 'leader 3 to rerun V#1');
    const c1 = l3.gateway.of(V)[0]!;
    expect(subtask(c1)).toBe(1);
    await numberLines(l3, c1);
    finish(l3.job, c1);
    await until(() => l3.job.state === 'FINISHED', 'the commit');
    const ids = await committedLines();
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
  });

  /*
   * With `subtaskAdopted`, V#1 finished after snapshot S1 is kept: its event recorded the block it
   * got, and leaders 2 and 3, restored to S1, take it back before they hand out another. Without
   * the recorded answers (max-held-coordinator-responses 0) it reruns, as FLIP-383 does.
   */
  it.each([
    ['kept by two later leaders, its block never handed out again', {}, 2],
    [
      'rerun when its answers were not recorded',
      { 'execution.batch.job-recovery.max-held-coordinator-responses': '0' },
      1,
    ],
  ])('a subtask that finished after the snapshot is %s', async (_name, config, recovered) => {
    const adopting: OperatorCoordinatorProvider<IdRequest, IdBlock, { next: number }> = {
      create: () => new AdoptingIdBlocks(0),
      restore: (_ctx, state) => new AdoptingIdBlocks(state.next),
    };
    const { graph, operators } = await graphOf(uniqueIds(adopting), config);
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect();
    await until(() => l1.gateway.of(V).length === 3, 'leader 1 to deploy three subtasks');
    const [a0, a1, a2] = bySubtask(l1.gateway.of(V));
    await numberLines(l1, a0!);
    finish(l1.job, a0!); // carries snapshot S1: next id 100
    await numberLines(l1, a1!);
    finish(l1.job, a1!); // within the snapshot pause: only its answer, ids 100-199
    await numberLines(l1, a2!); // running when leader 1 dies
    await leaders.kill(l1);

    const l2 = await leaders.elect();
    expect(l2.recoveries.at(-1)).toMatchObject({ executions_recovered: recovered, executions_reset: 2 - recovered });
    await until(() => l2.gateway.of(V).length === 3 - recovered, 'leader 2 to rerun the rest');
    await leaders.kill(l2); // before anything of it finished

    const l3 = await leaders.elect();
    expect(l3.recoveries.at(-1)).toMatchObject({ executions_recovered: recovered });
    await until(() => l3.gateway.of(V).length === 3 - recovered, 'leader 3 to rerun the rest');
    expect(l3.gateway.of(V).map(subtask).sort()).toEqual(recovered === 2 ? [2] : [1, 2]);
    for (const d of bySubtask(l3.gateway.of(V))) {
      await numberLines(l3, d);
      finish(l3.job, d);
    }
    await until(() => l3.job.state === 'FINISHED', 'the commit');
    const ids = await committedLines();
    expect(ids).toHaveLength(300);
    expect(new Set(ids).size).toBe(300);
  });

  it('kills the leader while the sink stage runs: sources and finished sinks are kept, the rest rerun, output exactly once', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: SMALL_TASKS });
    const sources = await runSources(l1);
    const SINK = graph.vertices[1]!.id;
    await until(() => l1.gateway.of(SINK).length === 4, 'the sink stage to run');
    const sink0 = l1.gateway.of(SINK).find((d) => d.tdd.execution!.subtask === 0)!;
    await finishSink(l1, sink0);
    await leaders.kill(l1);

    const l2 = await leaders.elect({
      config: { ...SMALL_TASKS, ...RECONCILE },
      retained: new Map([['tm-1', sources.map((d) => retainedPartitionOf(d))]]),
    });
    expect(l2.recoveries.at(-1)).toMatchObject({
      executions_recovered: 5,
      partitions_reused: 4,
      partitions_missing: 0,
      restarted_from_scratch: false,
    });
    await until(() => l2.gateway.of(SINK).length === 3, 'the unfinished sinks to rerun');
    expect(l2.gateway.of(SOURCE)).toHaveLength(0);
    expect(
      l2.gateway
        .of(SINK)
        .map((d) => d.tdd.execution!.subtask)
        .sort(),
    ).toEqual([1, 2, 3]);
    // They read the partitions leader 1's sources left.
    const read = l2.gateway
      .of(SINK)[0]!
      .tdd.inputs[0]!.partitions.map((p) => [p.partition_id!.attempt, p.partition_id!.epoch]);
    expect(read).toEqual([
      [0, 1],
      [0, 1],
      [0, 1],
      [0, 1],
    ]);
    for (const d of l2.gateway.of(SINK)) await finishSink(l2, d);
    await until(() => l2.job.state === 'FINISHED', 'the commit');
    expect(await committedLines()).toEqual([
      'part 0 of epoch 1',
      'part 1 of epoch 2',
      'part 2 of epoch 2',
      'part 3 of epoch 2',
    ]);
  });

  /*
   * Seen in the demo: a status read while the new leader replayed showed RECONCILING with every
   * count at 0, "progress went back". Until the replay is applied the status says CREATED.
   */
  it('a status read while the new leader replays never shows less progress than the log holds', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: SMALL_TASKS });
    const sources = await runSources(l1);
    await until(() => l1.gateway.of(graph.vertices[1]!.id).length === 4, 'the sink stage to run');
    await leaders.kill(l1);

    // Every turn of the event loop while leader 2 starts: what `rebound status` would have read.
    const seen: JobStatus[] = [];
    let polling = true;
    const l2 = await leaders.elect({
      config: { ...SMALL_TASKS, ...RECONCILE },
      retained: new Map([['tm-1', sources.map((d) => retainedPartitionOf(d))]]),
      beforeStart: (job) => {
        const poll = (): void => {
          if (!polling) return;
          seen.push(job.status());
          setImmediate(poll);
        };
        poll();
      },
    });
    polling = false;
    seen.push(l2.job.status());
    expect(l2.recoveries.at(-1)).toMatchObject({ partitions_reused: 4, restarted_from_scratch: false });
    const finishedSources = (s: JobStatus) => s.vertices?.[0]?.tasks?.finished ?? 0;
    const restored = seen.filter((s) => s.state !== 'CREATED');
    // The replay was watched (it reads the log over several turns), and so was what followed it.
    expect(seen.filter((s) => s.state === 'CREATED').length).toBeGreaterThan(1);
    expect(restored.length).toBeGreaterThan(0);
    expect(Math.min(...restored.map(finishedSources))).toBe(4);
  });

  /* Chaos etcd seed 5: the same TaskManager process registered again, holding its partitions. */
  it('a TaskManager that registers again as the same process keeps its finished work; only its running tasks rerun', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    // Slots to spare: the fake TaskManager never reports the canceled attempts that hold them.
    const l1 = await leaders.elect({ config: SMALL_TASKS, slots: 32 });
    await runSources(l1);
    const SINK = graph.vertices[1]!.id;
    await until(() => l1.gateway.of(SINK).length === 4, 'the sink stage to run');
    l1.job.onTaskManagerLost('tm-1', 'registered again', true);
    await until(() => l1.gateway.of(SINK).length === 8, 'the running sinks to be redeployed');
    expect(l1.gateway.of(SOURCE)).toHaveLength(4);
    // A TaskManager whose partitions are gone (another process, or unreachable): the sources rerun.
    l1.job.onTaskManagerLost('tm-1', 'no heartbeat');
    await until(() => l1.gateway.of(SOURCE).length === 8, 'the sources to rerun');
  });

  it('recovers a job whose every task finished before the commit: nothing reruns, the new leader commits', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: SMALL_TASKS, commits: false });
    await runSources(l1);
    const SINK = graph.vertices[1]!.id;
    await until(() => l1.gateway.of(SINK).length === 4, 'the sink stage to run');
    for (const d of l1.gateway.of(SINK)) await finishSink(l1, d);
    await until(() => l1.committed.length === 1, 'leader 1 to start its commit');
    await leaders.kill(l1);

    const l2 = await leaders.elect({ config: SMALL_TASKS });
    await until(() => l2.job.state === 'FINISHED', 'leader 2 to commit');
    expect(l2.gateway.deployed).toHaveLength(0);
    expect(l2.recoveries.at(-1)).toMatchObject({ executions_recovered: 8, restarted_from_scratch: false });
    expect(await committedLines()).toEqual([
      'part 0 of epoch 1',
      'part 1 of epoch 1',
      'part 2 of epoch 1',
      'part 3 of epoch 1',
    ]);
  });

  it('replays a reset: a producer reset after a lost partition reruns under the next leader, its consumers wait', async () => {
    const { graph, operators } = await graphOf(seqSum());
    leaders = new InProcessLeaders(join(dir, 'ha'), graph, operators);
    const l1 = await leaders.elect({ config: SMALL_TASKS });
    const sources = await runSources(l1);
    const SINK = graph.vertices[1]!.id;
    await until(() => l1.gateway.of(SINK).length === 4, 'the sink stage to run');
    const consumer = l1.gateway.of(SINK)[0]!;
    const lost = sources[2]!;
    const before = l1.gateway.deployed.length;
    l1.job.onTaskExecutionState({
      execution: consumer.tdd.execution,
      state: 'FAILED',
      task_manager_id: 'tm-1',
      epoch: consumer.tdd.epoch,
      io_metrics: null,
      error_code: 'PARTITION_NOT_FOUND',
      error_message: 'gone',
      missing_partition: retainedPartitionOf(lost).partition_id,
    });
    await until(() => l1.gateway.of(SOURCE, before).length === 1, 'leader 1 to rerun the producer');
    await leaders.kill(l1); // source#2's attempt 1 never finished

    const kept = sources.filter((d) => d !== lost).map((d) => retainedPartitionOf(d));
    const l2 = await leaders.elect({ config: { ...SMALL_TASKS, ...RECONCILE }, retained: new Map([['tm-1', kept]]) });
    const ev = l2.job.graph.executionVertex(SOURCE, 2)!;
    expect(ev.state).not.toBe('FINISHED');
    expect(l2.recoveries.at(-1)).toMatchObject({
      executions_recovered: 3,
      partitions_reused: 3,
      partitions_missing: 0,
    });
    await until(() => l2.gateway.of(SOURCE).length === 1, 'leader 2 to rerun source#2');
    const rerun = l2.gateway.of(SOURCE)[0]!;
    expect(rerun.tdd.execution).toMatchObject({ subtask: 2, attempt: 1 });
    expect(l2.gateway.of(SINK)).toHaveLength(0);
    finish(l2.job, rerun, [100, 0, 0, 100]);
    await until(() => l2.gateway.of(SINK).length === 4, 'the consumers once their producer is back');
    const read = l2.gateway
      .of(SINK)[0]!
      .tdd.inputs[0]!.partitions.map((p) => [p.partition_id!.attempt, p.partition_id!.epoch]);
    expect(read).toEqual([
      [0, 1],
      [0, 1],
      [1, 2],
      [0, 1],
    ]);
  });
});
