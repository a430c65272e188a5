import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { ErrorCode, loadProto, unary } from '@rebound/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectedNumbered } from './fixtures/numbered-source.js';
import { FORGED_SESSION, forgedRead, openAttempts, rejection } from './forged-rpc-util.js';
import { LocalCluster, suiteFailed, type TaskEvent } from './harness.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkLines, readSinkOutput } from './util.js';

/**
 * Forged calls, sent raw to a running cluster by an insider with the cluster secret (authentication
 * passes) who is neither the leader nor the TaskManager that holds an execution or partition.
 * A claimed epoch far above the real one must not fence the real leader out. Every other call
 * must be refused with PERMISSION_DENIED and change nothing, and the jobs it aimed at must end
 * with exactly their output. Before sessions and read capabilities each of them was accepted: the
 * forged FINISHED made the leader commit half-written sink files, the forged RequestSplit took a
 * split whose records vanished, the read was served, the release dropped a partition, the
 * registration evicted the real TaskManager.
 */
describe('forged calls of a cluster member', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({ jobmasters: 2, taskmanagers: 2, slots: 3 });
    data = await makeTempDir('rebound-it-forged-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('are refused without raising the fence, and the real leader still runs jobs', async () => {
    const leader = await cluster.leader();
    expect(leader).toBeDefined();
    const proto = loadProto();
    const forgedEpoch = 9e15;
    for (const tm of (await cluster.processes()).filter((p) => p.role === 'taskmanager')) {
      // An insider with the cluster secret: authentication passes, the epoch fence must still hold.
      const security = cluster.security();
      const client = new proto.TaskExecutorGateway(
        tm.address,
        security.channelCredentials(),
        security.channelOptions(),
      );
      try {
        const cancel = await rejection(
          unary(
            client,
            client.CancelTask,
            { epoch: forgedEpoch, execution: { job_id: 'j', vertex_id: 'v', subtask: 0, attempt: 0 } },
            10_000,
          ),
        );
        expect(cancel.code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
        const release = await rejection(
          unary(client, client.ReleasePartitions, { epoch: forgedEpoch, partitions: [] }, 10_000),
        );
        expect(release.code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
        const disconnect = await rejection(
          unary(client, client.DisconnectJob, { epoch: forgedEpoch, job_id: 'j', release_partitions: true }, 10_000),
        );
        expect(disconnect.code).toBe(ErrorCode.EPOCH_UNCONFIRMED);
      } finally {
        client.close();
      }
    }

    // Before the fence asked the leader record, the first forged call above raised every
    // TaskManager's fence to 9e15, and each deploy of the real leader was then refused as stale.
    const input = join(data, 'in');
    const output = join(data, 'out');
    const files = await generateTextFiles(input, { files: 4, linesPerFile: 200, seed: 3 });
    const run = await cluster.submit('examples/wordcount.ts', ['--input', input, '--output', output], {
      wait: true,
      timeoutMs: 90_000,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(diffMaps(await countWordsInFiles(files), await readSinkOutput(output))).toEqual([]);
  });

  const gateway = async (): Promise<{
    client: InstanceType<ReturnType<typeof loadProto>['JobMasterGateway']>;
    epoch: number;
  }> => {
    const leader = await cluster.leader();
    if (!leader) throw new Error('no leader');
    const security = cluster.security();
    return {
      client: new (loadProto().JobMasterGateway)(
        leader.address,
        security.channelCredentials(),
        security.channelOptions(),
      ),
      epoch: leader.epoch,
    };
  };

  it('refuses a registration under the id of a live TaskManager, and forged heartbeats and artifact fetches', async () => {
    const tms = (await cluster.processes()).filter((p) => p.role === 'taskmanager');
    await cluster.waitFor(
      async () => (await cluster.overview()).task_managers.length === 2 || undefined,
      30_000,
      'both TaskManagers to register',
    );
    const { client, epoch } = await gateway();
    try {
      for (const tm of tms) {
        const reg = await rejection(
          unary(
            client,
            client.RegisterTaskManager,
            {
              task_manager_id: tm.id,
              address: '127.0.0.1:9',
              slots: 0,
              epoch,
              session_id: FORGED_SESSION,
              jobs_with_retained_partitions: [],
            },
            10_000,
          ),
        );
        expect(reg.code).toBe(ErrorCode.PERMISSION_DENIED);
        const hb = await rejection(
          unary(
            client,
            client.Heartbeat,
            { task_manager_id: tm.id, epoch, running: [], session_id: FORGED_SESSION },
            10_000,
          ),
        );
        expect(hb.code).toBe(ErrorCode.PERMISSION_DENIED);
      }
      const fetch = await rejection(
        unary(
          client,
          client.FetchJobArtifact,
          { job_id: 'any', epoch, task_manager_id: tms[0]!.id, session_id: FORGED_SESSION },
          10_000,
        ),
      );
      expect(fetch.code).toBe(ErrorCode.PERMISSION_DENIED);
    } finally {
      client.close();
    }
    // Nothing was evicted: the real TaskManagers are registered at their own addresses.
    const registered = (await cluster.overview()).task_managers.map((t) => `${t.task_manager_id}@${t.address}`).sort();
    expect(registered).toEqual(tms.map((t) => `${t.id}@${t.address}`).sort());
  });

  it('refuses forged task updates and split requests for running sink subtasks; the output is exact', async () => {
    const splits = 4;
    const records = 120;
    const out = join(data, 'direct');
    // The sinks run in the source tasks (--direct): FINISHED for them is "commit my file".
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      String(splits),
      '--records',
      String(records),
      '--delay-ms',
      '30',
      '--parallelism',
      '2',
      '--direct',
      'true',
      '--output',
      out,
    ]);
    const running = await cluster.waitFor(
      async () => {
        const open = openAttempts(await cluster.taskEvents(), jobId);
        return open.length === 2 ? open : undefined;
      },
      30_000,
      'both sink subtasks to run',
    );
    const { client, epoch } = await gateway();
    // A TaskManager of the forger's own: registering a new id is what a cluster member may do,
    // and it gives a valid session, just not the one of the TaskManager holding the executions.
    await unary(
      client,
      client.RegisterTaskManager,
      {
        task_manager_id: 'tm-forger',
        address: '127.0.0.1:9',
        slots: 0,
        epoch,
        session_id: FORGED_SESSION,
        jobs_with_retained_partitions: [],
      },
      10_000,
    );
    try {
      for (const e of running) {
        const execution = { job_id: jobId, vertex_id: e.vertexId, subtask: e.subtask, attempt: e.attempt };
        for (const [tmId, session] of [
          [e.taskManagerId, 'not-its-session-00000000000000'],
          ['tm-forger', FORGED_SESSION],
        ] as const) {
          const update = await rejection(
            unary(
              client,
              client.UpdateTaskExecutionState,
              {
                execution,
                state: 'FINISHED',
                task_manager_id: tmId,
                epoch,
                session_id: session,
                io_metrics: { records_in: 0, records_out: 0, bytes_in: 0, bytes_out: 0, subpartition_bytes: [] },
              },
              10_000,
            ),
          );
          expect(update.code, `${update.message}`).toBe(ErrorCode.PERMISSION_DENIED);
          const split = await rejection(
            unary(
              client,
              client.RequestSplit,
              { execution, epoch, operator_id: '', task_manager_id: tmId, session_id: session, finished_split_ids: [] },
              10_000,
            ),
          );
          expect(split.code, `${split.message}`).toBe(ErrorCode.PERMISSION_DENIED);
        }
      }
    } finally {
      client.close();
    }
    // The forged calls aimed at tasks that were running: some sink subtask still ran after all of them.
    const key = (e: TaskEvent) => `${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}/${e.epoch ?? 0}`;
    const stillOpen = openAttempts(await cluster.taskEvents(), jobId).map(key);
    expect(running.filter((e) => stillOpen.includes(key(e))).length, running.map(key).join(', ')).toBeGreaterThan(0);
    await cluster.waitForJob(jobId, 120_000);
    const expected: string[] = [];
    for (let s = 0; s < splits; s++) for (let k = 0; k < records; k++) expected.push(`${s}\t${s * records + k}`);
    expect((await readSinkLines(out)).sort()).toEqual(expected.sort());
  });

  it('refuses forged reads, releases and other leader calls with the current epoch; the job is exact', async () => {
    const out = join(data, 'shuffle');
    const records = 300;
    // Three readers for two splits: one source subtask finishes at once and its partition
    // waits on its TaskManager while the other two read.
    const { jobId } = await cluster.submit('test/fixtures/numbered.ts', [
      '--splits',
      '2',
      '--records',
      String(records),
      '--delay-ms',
      '40',
      '--parallelism',
      '3',
      '--output',
      out,
    ]);
    const finished = await cluster.waitFor(
      async () => {
        const events = (await cluster.taskEvents()).filter((e) => e.jobId === jobId);
        const done = events.find((e) => e.event === 'task.finish');
        const open = openAttempts(events, jobId);
        return done && open.length > 0 ? { done, open } : undefined;
      },
      30_000,
      'a source subtask to finish while the others read',
    );
    const { done, open } = finished;
    const producer = await cluster.process(done.taskManagerId);
    const leader = (await cluster.leader())!;
    const partitionId = {
      job_id: jobId,
      vertex_id: done.vertexId,
      subtask: done.subtask,
      attempt: done.attempt,
      epoch: done.epoch ?? leader.epoch,
    };
    const security = cluster.security();

    const read = await rejection(forgedRead(producer.address, partitionId, security));
    expect(read.code, read.message).toBe(ErrorCode.PERMISSION_DENIED);

    const proto = loadProto();
    const tmClient = new proto.TaskExecutorGateway(
      producer.address,
      security.channelCredentials(),
      security.channelOptions(),
    );
    try {
      const epoch = leader.epoch;
      const release = await rejection(
        unary(
          tmClient,
          tmClient.ReleasePartitions,
          { epoch, partitions: [partitionId], session_id: FORGED_SESSION },
          10_000,
        ),
      );
      expect(release.code, release.message).toBe(ErrorCode.PERMISSION_DENIED);
      const retain = await rejection(
        unary(tmClient, tmClient.GetAndRetainPartitionsWithMetrics, { epoch, job_id: jobId }, 10_000),
      );
      expect(retain.code).toBe(ErrorCode.PERMISSION_DENIED);
      const disconnect = await rejection(
        unary(tmClient, tmClient.DisconnectJob, { epoch, job_id: jobId, release_partitions: true }, 10_000),
      );
      expect(disconnect.code).toBe(ErrorCode.PERMISSION_DENIED);
    } finally {
      tmClient.close();
    }
    // A forged cancel of every running attempt, each sent to the TaskManager that runs it (the
    // loop is not empty: the wait above found open attempts).
    const targets = open.map((e) => `${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}/${e.epoch ?? 0}`);
    expect(targets.length).toBeGreaterThan(0);
    for (const e of open) {
      const tm = await cluster.process(e.taskManagerId);
      const client = new proto.TaskExecutorGateway(
        tm.address,
        security.channelCredentials(),
        security.channelOptions(),
      );
      try {
        const cancel = await rejection(
          unary(
            client,
            client.CancelTask,
            {
              epoch: leader.epoch,
              execution: { job_id: jobId, vertex_id: e.vertexId, subtask: e.subtask, attempt: e.attempt },
            },
            10_000,
          ),
        );
        expect(cancel.code, cancel.message).toBe(ErrorCode.PERMISSION_DENIED);
      } finally {
        client.close();
      }
    }
    // The forged calls reached running tasks: some target was still running after all of them.
    const after = openAttempts(await cluster.taskEvents(), jobId).map(
      (e) => `${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}/${e.epoch ?? 0}`,
    );
    expect(targets.filter((t) => after.includes(t)).length, `targets ${targets.join(', ')}`).toBeGreaterThan(0);
    await cluster.waitForJob(jobId, 120_000);
    expect(diffMaps(expectedNumbered(2, records), await readSinkOutput(out, String))).toEqual([]);
    // None of them was cancelled by the forged calls.
    const cancelled = (await cluster.taskEvents()).filter(
      (e) =>
        e.jobId === jobId &&
        e.event === 'task.cancel' &&
        targets.includes(`${e.taskManagerId}/${e.vertexId}/${e.subtask}/${e.attempt}/${e.epoch ?? 0}`),
    );
    expect(cancelled).toEqual([]);
  });

  it('lets the real TaskManagers register again with a new leader after the leader is killed', async () => {
    const tms = (await cluster.processes()).filter((p) => p.role === 'taskmanager');
    const killed = await cluster.killLeader();
    await cluster.waitFor(
      async () => {
        const o = await cluster.overview();
        const ids = o.task_managers.map((t) => t.task_manager_id).sort();
        return o.epoch > killed.epoch &&
          ids.join() ===
            tms
              .map((t) => t.id)
              .sort()
              .join()
          ? o
          : undefined;
      },
      60_000,
      'both TaskManagers to register with the new leader',
    );
    const out = join(data, 'after-failover');
    const run = await cluster.submit(
      'test/fixtures/numbered.ts',
      ['--splits', '3', '--records', '50', '--output', out],
      { wait: true, timeoutMs: 90_000 },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(diffMaps(expectedNumbered(3, 50), await readSinkOutput(out, String))).toEqual([]);
  });
});
