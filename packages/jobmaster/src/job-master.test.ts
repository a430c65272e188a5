import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Configuration, NotLeaderError, decodeMessage, encodeMessage, silentLogger, systemClock } from '@rebound/core';
import type { JobGraph__Output, TaskDeploymentDescriptor__Output } from '@rebound/core';
import { buildJob, defineJob } from '@rebound/api';
import { JobMaster } from './job-master.js';
import { InProcessUserCode } from './user-code/in-process-user-code.js';
import { TaskManagerRegistry } from './task-manager-registry.js';
import type { ShuffleMaster } from './shuffle/shuffle-master.js';
import { TaskManagerShuffleMaster } from './shuffle/task-manager-shuffle-master.js';
import { fakeTaskManager, finishTask, until } from './testing/fake-task-manager.js';
import { FakeTaskExecutorGateway } from './testing/in-process-leaders.js';

describe('JobMaster scheduling', () => {
  let out: string;
  let deployed: TaskDeploymentDescriptor__Output[];
  let tms: { address: string; close(): Promise<void> }[];
  let registry: TaskManagerRegistry;
  let terminal: JobMaster[];

  beforeEach(async () => {
    out = join(await mkdtemp(join(tmpdir(), 'rebound-jm-')), 'out');
    deployed = [];
    terminal = [];
    tms = [await fakeTaskManager(deployed), await fakeTaskManager(deployed)];
    const config = Configuration.of({ 'heartbeat.timeout': '1 min', 'restart-strategy.fixed-delay.delay': '0 ms' });
    registry = new TaskManagerRegistry(
      7,
      'jm-test',
      config,
      { onTaskManagerRegistered: () => {}, onTaskManagerLost: () => {} },
      silentLogger(),
      systemClock,
    );
    tms.forEach((tm, i) =>
      registry.register({
        task_manager_id: `tm-${i}`,
        address: tm.address,
        slots: 2,
        epoch: 7,
        jobs_with_retained_partitions: [],
        session_id: `session-${i}`,
      }),
    );
  });

  afterEach(async () => {
    registry.close();
    await Promise.all(tms.map((t) => t.close()));
  });

  async function startJob(
    saveCommitManifest = async (): Promise<void> => {},
    shuffleMaster?: ShuffleMaster,
  ): Promise<JobMaster> {
    const def = defineJob('seq-sum', (env) => {
      env
        .generateSequence(0, 99, { splitSize: 25 })
        .map((n) => [n % 3, n] as [number, number])
        .keyBy((t) => t[0])
        .sum(1)
        .writeAsText(out);
    });
    const built = await buildJob(def, []);
    const graph = {
      ...built.graph,
      job_id: '0123456789abcdef0123456789abcdef',
      module_digest: '0'.repeat(64),
      config: { 'execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task': '100 b' },
      vertices: (built.graph.vertices ?? []).map((v) => ({ ...v, max_parallelism: 4 })),
    };
    const decoded = decodeMessage<JobGraph__Output>('JobGraph', encodeMessage('JobGraph', graph));
    const job = new JobMaster(decoded, new InProcessUserCode(built.operators, silentLogger()), {
      epoch: 7,
      jobmasterId: 'jm-test',
      address: '127.0.0.1:1',
      config: Configuration.of({
        'restart-strategy.fixed-delay.delay': '0 ms',
        'restart-strategy.fixed-delay.attempts': '3',
      }),
      registry,
      logger: silentLogger(),
      clock: systemClock,
      electedAtMs: Date.now(),
      recoveries: [],
      saveRecoveries: async () => {},
      saveCommitManifest,
      onTerminal: async (j) => {
        terminal.push(j);
      },
      onSlotsFreed: () => job.schedule(),
      ...(shuffleMaster ? { shuffleMaster } : {}),
    });
    await job.start();
    return job;
  }

  it('runs stages in order, decides the consumer parallelism from bytes, and commits the sink', async () => {
    const job = await startJob();
    // 4 splits -> 4 source subtasks, 4 slots: all deployed at once; nothing downstream yet.
    await until(() => deployed.length === 4, 'source deployments');
    expect(new Set(deployed.map((d) => d.execution!.vertex_id))).toEqual(new Set(['v-op-1']));
    expect(deployed.every((d) => d.output?.num_subpartitions === 4 && d.output.distribution === 'HASH')).toBe(true);
    for (const d of deployed.slice(0, 3)) finishTask(job, d, [100, 0, 0, 100]);
    // Scheduling runs synchronously inside onTaskExecutionState: had it started the consumer, the
    // vertex would be initialized by now, whenever its deployment reaches the TaskManager.
    expect(job.graph.vertices.filter((v) => v.id !== 'v-op-1').map((v) => v.isInitialized)).toEqual([false]);
    expect(deployed).toHaveLength(4);
    finishTask(job, deployed[3]!, [100, 0, 0, 100]);
    // 800 bytes at 100 b per task -> clamp to 4 subpartitions; the empty middle ones are merged.
    await until(() => deployed.length > 4, 'consumer deployment');
    const consumers = deployed.slice(4);
    const v = job.graph.vertex(consumers[0]!.execution!.vertex_id);
    expect(v.parallelism).toBe(4);
    expect(consumers[0]!.inputs[0]!.partitions).toHaveLength(4);
    await until(() => deployed.length === 8, 'all consumers');
    for (const c of deployed.slice(4)) {
      await mkdir(dirname(c.sink_temp_file), { recursive: true });
      await writeFile(c.sink_temp_file, `part ${c.execution!.subtask}\n`);
      finishTask(job, c);
    }
    await until(() => terminal.length === 1, 'job end');
    expect(job.state).toBe('FINISHED');
    expect(await readFile(join(out, 'part-00002'), 'utf8')).toBe('part 2\n');
    expect(await readFile(join(out, '_SUCCESS'), 'utf8')).toBe('');
  });

  it('tells the shuffle master which workers a failed producer could not reach', async () => {
    const excluded: { ids: readonly string[]; reason: string }[] = [];
    const shuffle = new (class extends TaskManagerShuffleMaster {
      override excludeWorkers(ids: readonly string[], reason: string): void {
        excluded.push({ ids, reason });
      }
    })({ epoch: 7, gateway: new FakeTaskExecutorGateway() });
    const job = await startJob(undefined, shuffle);
    await until(() => deployed.length === 4, 'source deployments');
    job.onTaskExecutionState({
      ...stateOf(deployed[0]!),
      state: 'FAILED',
      error_code: 'USER_CODE',
      error_message: 'x',
    });
    expect(excluded).toEqual([]);
    job.onTaskExecutionState({
      ...stateOf(deployed[1]!),
      state: 'FAILED',
      error_code: 'UNAVAILABLE',
      error_message: 'shuffle worker sw-2 (127.0.0.1:9): connect ECONNREFUSED',
      unreachable_shuffle_workers: ['sw-2'],
    });
    expect(excluded).toEqual([{ ids: ['sw-2'], reason: 'shuffle worker sw-2 (127.0.0.1:9): connect ECONNREFUSED' }]);
  });

  // etcd chaos seed 2: an etcd member cut off during the commit used to fail a job whose work was done.
  it('a leadership that ends while the commit manifest is written leaves the commit to the next leader', async () => {
    let attempts = 0;
    const job = await startJob(async () => {
      attempts++;
      throw new NotLeaderError('storing the job attachment: this leadership ended while the HA store did not answer');
    });
    await until(() => deployed.length === 4, 'source deployments');
    for (const d of deployed.slice(0, 4)) finishTask(job, d, [100, 0, 0, 100]);
    await until(() => deployed.length === 8, 'all consumers');
    for (const c of deployed.slice(4)) {
      await mkdir(dirname(c.sink_temp_file), { recursive: true });
      await writeFile(c.sink_temp_file, `part ${c.execution!.subtask}\n`);
      finishTask(job, c);
    }
    await until(() => attempts === 1, 'the commit to begin');
    await new Promise((r) => setImmediate(r));
    expect(job.state).not.toBe('FAILED');
    expect(job.status().failure ?? '').toBe('');
    expect(terminal).toHaveLength(0);
    await expect(readFile(join(out, '_SUCCESS'), 'utf8')).rejects.toThrow(/ENOENT/);
  });

  it('restarts a failed task alone, and reruns the producer of a partition that was not found', async () => {
    const job = await startJob();
    await until(() => deployed.length === 4, 'source deployments');
    const failed = deployed[1]!;
    job.onTaskExecutionState({ ...stateOf(failed), state: 'FAILED', error_code: 'USER_CODE', error_message: 'boom' });
    await until(() => deployed.length === 5, 'redeployment');
    expect(deployed[4]!.execution).toMatchObject({
      vertex_id: failed.execution!.vertex_id,
      subtask: failed.execution!.subtask,
      attempt: 1,
    });
    for (const d of deployed.filter((d) => d !== failed)) finishTask(job, d, [10, 10, 10, 10]);
    await until(() => deployed.some((d) => d.execution!.vertex_id !== 'v-op-1'), 'consumers');
    const consumer = deployed.find((d) => d.execution!.vertex_id !== 'v-op-1')!;
    const lost = consumer.inputs[0]!.partitions[2]!.partition_id!;
    const before = deployed.length;
    job.onTaskExecutionState({
      ...stateOf(consumer),
      state: 'FAILED',
      error_code: 'PARTITION_NOT_FOUND',
      error_message: 'gone',
      missing_partition: lost,
    });
    // The producer of the lost partition reruns with a new attempt; the consumer waits for it.
    await until(() => deployed.length > before, 'producer rerun');
    expect(deployed[before]!.execution).toMatchObject({
      vertex_id: 'v-op-1',
      subtask: lost.subtask,
      attempt: lost.attempt + 1,
    });
    expect(job.graph.executionVertex(consumer.execution!.vertex_id, consumer.execution!.subtask)!.state).toBe(
      'CREATED',
    );
    expect(job.restarts).toBe(2);
    // Both failures are in the exception history, newest first, with the subtask and its TaskManager.
    const history = job.exceptionHistory.snapshot();
    expect(history.entries.map((e) => [e.exceptionName, e.stacktrace, e.taskName])).toEqual([
      [
        'PartitionNotFound',
        'gone',
        expect.stringMatching(new RegExp(` \\(${consumer.execution!.subtask + 1}/\\d+\\)$`)),
      ],
      ['TaskFailure', 'boom', expect.stringMatching(new RegExp(` \\(${failed.execution!.subtask + 1}/4\\)$`))],
    ]);
    expect(history.entries[1]!.taskManagerId).toBeTruthy();
    await job.cancel();
  });

  it('fails the job when the restart strategy is exhausted', async () => {
    const job = await startJob();
    await until(() => deployed.length === 4, 'source deployments');
    for (let i = 0; i < 4; i++) {
      const current = deployed[deployed.length - 1]!;
      job.onTaskExecutionState({
        ...stateOf(current),
        state: 'FAILED',
        error_code: 'USER_CODE',
        error_message: `boom ${i}`,
      });
      if (i < 3) await until(() => deployed.length === 5 + i, 'redeployment');
    }
    await until(() => terminal.length === 1, 'job failure');
    expect(job.state).toBe('FAILED');
    expect(job.failure).toMatch(/restart strategy exhausted after 3 restarts; last failure: boom 3/);
    expect(job.exceptionHistory.snapshot().entries.map((e) => e.stacktrace)).toEqual([
      'boom 3',
      'boom 2',
      'boom 1',
      'boom 0',
    ]);
  });
});

function stateOf(tdd: TaskDeploymentDescriptor__Output) {
  return {
    execution: tdd.execution,
    task_manager_id: '',
    epoch: tdd.epoch,
    io_metrics: null,
    error_code: '',
    error_message: '',
    missing_partition: null,
  };
}
