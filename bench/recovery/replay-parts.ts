import { cp, mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { SourceSplit } from '@rebound/api';
import { silentLogger, type PartitionWithMetrics__Output } from '@rebound/core';
import { JobEventManager, type JobEventRecord } from '@rebound/event-store';
import {
  ExecutionGraph,
  FinishedOutputs,
  PartitionReconciliation,
  ReplayedJobState,
  SourceCoordinator,
  TaskManagerRegistry,
  taskManagerHolder,
  type PartitionWithMetrics,
  type RegisteredTaskManager,
} from '@rebound/jobmaster';
import { eventStoreOf } from './event-log.js';
import type { PartTimings } from './replay-bench-result.js';
import type { FakeTaskManager } from './fake-taskmanager-processes.js';
import { SOURCE_OP, SOURCE_VERTEX, fineClock, type Fixture } from './replay-fixture.js';

/** The same steps one at a time, without the JobMaster around them. */
export async function timeParts(
  f: Fixture,
  fakes: readonly FakeTaskManager[],
  baseDir: string,
): Promise<{ parts: PartTimings; snapshots: number }> {
  const haDir = await mkdtemp(join(baseDir, 'rebound-replay-parts-'));
  await cp(f.haDir, haDir, { recursive: true });
  const events = new JobEventManager(eventStoreOf(haDir, f.graph.job_id, 99, { config: f.config }));
  await events.start();
  const records: JobEventRecord[] = [];
  let t = performance.now();
  const result = await events.replay((r) => void records.push(r));
  const readDecodeMs = performance.now() - t;
  await events.stop(false);
  await rm(haDir, { recursive: true, force: true });
  if (!result.ok) throw new Error('replay failed');

  const replayed = new ReplayedJobState(f.graph);
  t = performance.now();
  for (const r of records) replayed.apply(r);
  const replayedStateApplyMs = performance.now() - t;

  const graph = new ExecutionGraph(f.graph);
  t = performance.now();
  for (const ejv of graph.vertices) {
    const init = replayed.initialized.get(ejv.id);
    if (init)
      graph.initializeVertex(
        ejv,
        init.parallelism,
        init.inputs.map((i) => i.subtask_ranges.map((r) => ({ start: r.start, end: r.end }))),
        ejv.jobVertex.parallelism === 0,
      );
  }
  for (const e of replayed.finished()) {
    const ev = graph.executionVertex(e.vertex_id, e.subtask)!;
    ev.attempt = e.attempt;
    // As JobMaster.applyReplay does: without it every id would carry epoch 0 and match nothing.
    ev.attemptEpoch = e.attempt_epoch;
    graph.markFinished(ev, e.location!, e.io_metrics!, e.finished_at_ms);
  }
  for (const ev of graph.allExecutionVertices())
    if (ev.state !== 'FINISHED') ev.attempt = replayed.maxAttempt(ev.jobVertex.id, ev.subtask) + 1;
  const graphMs = performance.now() - t;

  const op = f.operators.get(SOURCE_OP);
  if (!op || op.kind !== 'source') throw new Error('no source');
  const coordinator = new SourceCoordinator(
    op.id,
    'source',
    op.source,
    f.graph.vertices[0]!.parallelism || replayed.initialized.get(SOURCE_VERTEX)!.parallelism,
    silentLogger(),
  );
  t = performance.now();
  const owned = new Map<number, SourceSplit[]>();
  for (const e of replayed.finishedOf(SOURCE_VERTEX)) {
    const inc = e.coordinator_increments.find((c) => c.operator_id === op.id);
    owned.set(e.subtask, inc ? (JSON.parse(Buffer.from(inc.state).toString('utf8')) as SourceSplit[]) : []);
  }
  await coordinator.restore(
    replayed.snapshots.get(op.id),
    owned,
    new Map(graph.vertex(SOURCE_VERTEX).vertices.map((ev) => [ev.subtask, ev.attempt])),
  );
  const coordinatorRestoreMs = performance.now() - t;
  await coordinator.close();

  // The partition RPCs exactly as reconcilePartitions makes them (all TaskManagers at once).
  const registry = new TaskManagerRegistry(
    99,
    'jm-parts',
    f.config,
    { onTaskManagerRegistered: () => {}, onTaskManagerLost: () => {} },
    silentLogger(),
    fineClock,
  );
  const tms: RegisteredTaskManager[] = fakes.map((tm) => {
    registry.register({
      task_manager_id: tm.id,
      address: tm.address,
      slots: 0,
      epoch: 99,
      jobs_with_retained_partitions: [],
      session_id: `session-${tm.id}`,
    });
    return registry.get(tm.id)!;
  });
  t = performance.now();
  const reported = await Promise.all(
    tms.map((tm) =>
      registry
        .call(tm, (c) => c.GetAndRetainPartitionsWithMetrics, { epoch: 99, job_id: f.graph.job_id })
        .then((r) => ({ tm, partitions: r.partitions as PartitionWithMetrics__Output[] })),
    ),
  );
  const partitionRpcMs = performance.now() - t;
  registry.close();

  t = performance.now();
  const outputs = FinishedOutputs.of(graph, {
    holdersOf: (_job, _partition, at) => [{ kind: 'taskmanager', id: at.task_manager_id, address: at.address }],
  });
  const rec = new PartitionReconciliation(outputs);
  const all: PartitionWithMetrics[] = [];
  for (const r of reported) {
    const holder = taskManagerHolder(r.tm);
    const reports = r.partitions.map((partition) => ({ holder, partition }));
    all.push(...reports);
    rec.add(reports);
    rec.allNeededReported();
  }
  let matched = 0;
  for (const r of all) {
    const output = outputs.find(r.partition.partition_id!);
    if (output?.needed && rec.reportedBy(output, r.holder.id)) matched++;
  }
  const reconcileBookkeepingMs = performance.now() - t;
  if (matched !== replayed.finishedCount) throw new Error(`only ${matched} partitions matched`);
  const snapshots = records.filter(
    (r) => r.type === 'ExecutionVertexFinished' && r.event.coordinator_snapshots.length > 0,
  ).length;
  return {
    parts: {
      readDecodeMs,
      replayedStateApplyMs,
      graphMs,
      coordinatorRestoreMs,
      reconcileBookkeepingMs,
      partitionRpcMs,
    },
    snapshots,
  };
}
