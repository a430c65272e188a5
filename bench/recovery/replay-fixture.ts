/**
 * The replay benchmark's job and the event log its first JobMaster leaves (see replay.ts): what
 * every timed recovery and the parts timed one by one start from.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildJob, defineJob, type Transformation } from '@rebound/api';
import {
  Configuration,
  decodeMessage,
  encodeMessage,
  newJobId,
  silentLogger,
  type Clock,
  type JobGraph__Output,
} from '@rebound/core';
import { JobEventManager } from '@rebound/event-store';
import {
  ExecutionGraph,
  InProcessUserCode,
  JobEventRecorder,
  OperatorCoordinators,
  decideVertexParallelismAndInputs,
} from '@rebound/jobmaster';
import { eventStoreOf } from './event-log.js';
import type { ReplayBenchOptions } from './replay-bench-result.js';

export const SOURCE_OP = 'op-1';
export const SOURCE_VERTEX = `v-${SOURCE_OP}`;

/** Sub-millisecond wall clock, so the recovery report's parts are exact. */
export const fineClock: Clock = { now: () => performance.timeOrigin + performance.now() };

function jobDefinition(executions: number, consumerParallelism: number) {
  return defineJob('replay-bench', (env) => {
    const sum = env
      .generateRows(executions, (i) => i, { splitSize: 1, parallelism: executions })
      .map((i): [number, number] => [i % 1000, 1])
      .keyBy((t) => t[0])
      .sum(1);
    if (consumerParallelism > 0) sum.setParallelism(consumerParallelism);
    sum.writeAsText(join(tmpdir(), 'rebound-replay-bench-out'));
  });
}

export interface Fixture {
  readonly haDir: string;
  readonly graph: JobGraph__Output;
  readonly operators: ReadonlyMap<string, Transformation>;
  readonly config: Configuration;
  readonly events: number;
  readonly logBytes: number;
  readonly logFiles: number;
  readonly subpartitions: number;
  readonly consumerParallelism: number;
  readonly writeMs: number;
}

/** Epoch of the leader that ran the job first (and deployed every finished attempt). */
export const FIRST_LEADER_EPOCH = 1;

/** Writes the first JobMaster's event log: every source subtask finished, the consumer initialized. */
export async function writeFixture(opts: ReplayBenchOptions, baseDir: string): Promise<Fixture> {
  const built = await buildJob(jobDefinition(opts.executions, opts.consumerParallelism), []);
  const jobId = newJobId();
  // Long timeouts: on a loaded machine the partition RPCs take seconds, and the point is to measure how many.
  const jobConfig = {
    'execution.batch.job-recovery.enabled': 'true',
    'execution.batch.job-recovery.previous-worker.recovery.timeout': '120 s',
    'rpc.timeout': '120 s',
  };
  // As the JobGraphStore hands it to a new leader: decoded from its binary form.
  const graph = decodeMessage<JobGraph__Output>(
    'JobGraph',
    encodeMessage('JobGraph', { ...built.graph, job_id: jobId, config: jobConfig, submitted_at_ms: Date.now() }),
  );
  const config = Configuration.of({}).with(jobConfig);
  const haDir = await mkdtemp(join(baseDir, 'rebound-replay-bench-'));

  // Simulated time of the first run: a task finishes every 20 ms, so the default 3 min
  // snapshot pause lets a full snapshot out every 9,000 events, as it would in a real run.
  let simNow = 1_800_000_000_000;
  const simClock: Clock = { now: () => simNow };
  const store = eventStoreOf(haDir, jobId, 1, { config });
  const events = new JobEventManager(store, simClock);
  await events.start();
  const executionGraph = new ExecutionGraph(graph);
  const coordinators = new OperatorCoordinators({
    userCode: new InProcessUserCode(built.operators, silentLogger()),
    logger: silentLogger(),
    maxHeldResponses: config.getInt('execution.batch.job-recovery.max-held-coordinator-responses'),
    onFailure: (reason) => {
      throw new Error(reason);
    },
  });
  const recorder = new JobEventRecorder({
    jobId: graph.job_id,
    epoch: 1,
    events,
    coordinators,
    snapshotMinPauseMs: config.getDurationMs('execution.batch.job-recovery.snapshot.min-pause'),
    clock: simClock,
    logger: silentLogger(),
  });
  executionGraph.addListener(recorder);

  const source = executionGraph.vertex(SOURCE_VERTEX);
  const consumer = source.consumers[0]!;
  const op = built.operators.get(SOURCE_OP);
  if (!op || op.kind !== 'source') throw new Error('the bench job has no source op-1');
  const coordinator = coordinators.createSource(source, opts.executions);
  await coordinator.start();
  const maxParallelism = config.getInt('execution.batch.adaptive.auto-parallelism.max-parallelism');
  const subpartitions = executionGraph.numSubpartitionsFor(source, maxParallelism);

  const t0 = performance.now();
  executionGraph.initializeVertex(source, opts.executions, [], false);
  const tms = Array.from({ length: opts.taskManagers }, (_, i) => ({
    task_manager_id: `tm-${i + 1}`,
    address: `127.0.0.1:${41_000 + i}`,
  }));
  for (const ev of source.vertices) {
    const answer = coordinator.requestSplit(ev.subtask, ev.attempt);
    if (!('split' in answer)) throw new Error(`subtask ${ev.subtask} got no split: ${JSON.stringify(answer)}`);
    coordinator.subtaskFinished(ev.subtask, ev.attempt);
    // Deployed by the first leader: its partition id (and the finished event) carry epoch 1.
    ev.attemptEpoch = FIRST_LEADER_EPOCH;
    simNow += 20;
    const subpartitionBytes = Array.from(
      { length: subpartitions },
      (_, k) => 2_000 + ((ev.subtask * 7919 + k * 104_729) % 20_000),
    );
    const bytesOut = subpartitionBytes.reduce((a, b) => a + b, 0);
    executionGraph.markFinished(
      ev,
      tms[ev.subtask % tms.length]!,
      { records_in: 1, records_out: 1, bytes_in: 0, bytes_out: bytesOut, subpartition_bytes: subpartitionBytes },
      simNow,
    );
    // As a JobMaster answers RPCs between finished tasks: the store's flush timer gets to run.
    if (ev.subtask % 1000 === 999) await new Promise<void>((r) => setImmediate(r));
  }
  // The consumer is decided as a JobMaster decides it, from the bytes the sources reported.
  const decided = decideVertexParallelismAndInputs(consumer, subpartitions, config);
  executionGraph.initializeVertex(
    consumer,
    decided.parallelism,
    consumer.jobVertex.inputs.map(() => decided.ranges),
    consumer.jobVertex.parallelism === 0,
  );
  await events.stop(false);
  const writeMs = performance.now() - t0;
  await coordinator.close();
  const stats = store.stats();
  return {
    haDir,
    graph,
    operators: built.operators,
    config,
    events: stats.eventsWritten,
    logBytes: stats.bytesWritten,
    logFiles: stats.filesCreated,
    subpartitions,
    consumerParallelism: decided.parallelism,
    writeMs,
  };
}
