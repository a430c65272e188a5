import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import {
  HISTOGRAM_JOB,
  MIDDLE_PARALLELISM,
  WORDCOUNT_JOB,
  allSubtasks,
  deploymentsAfter,
  expectedHistogram,
  finishedInLog,
  finishedOf,
  firstRecoveryAfter,
  histogramArgs,
  killLeader,
  readEventLog,
  redeployedSubtasks,
  waitForLog,
  waitForNewLeader,
  histogramStarted,
} from './recovery-util.js';
import { countWordsInFiles, diffMaps, generateTextFiles, makeTempDir, readSinkOutput } from './util.js';

/**
 * FLIP-383 batch job recovery, end to end: a leading JobMaster is SIGKILLed at a chosen point
 * of a job, a standby takes over, and the test checks the output and exactly which subtasks the
 * TaskManagers were asked to run again (their task.deploy log lines, by leader epoch).
 */
describe('batch job recovery after the leader dies', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        // FLIP-383's rules: running tasks fail with their leader and rerun. Kept running tasks
        // (the default) are tested in keep-running-tasks.test.ts.
        'execution.batch.job-recovery.keep-running-tasks': 'false',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        // Events are durable 50 ms after they happen, so what the test reads is what the next leader reads.
        'job-event.store.write-buffer.flush-interval': '50 ms',
        // Small blocks: the slow reduce of the fixture blocks its thread for one block at a time.
        'taskmanager.network.block-size': '128 b',
      },
    });
    data = await makeTempDir('rebound-it-recovery-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  /** Waits until the job's three vertices are known (the source's parallelism is decided at start). */
  async function vertices(jobId: string) {
    return histogramStarted(cluster, jobId);
  }

  it('reruns only the unfinished middle stage when the leader dies while it runs', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'middle');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, reduceDelayMs: 2 }),
      {
        config: { 'taskmanager.network.combiner.max-keys': '0' },
      },
    );
    const { source, middle } = await vertices(jobId);
    expect(source.parallelism).toBe(4);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === 4,
      30_000,
      'every source subtask finished',
    );
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    // The scenario: all sources done, the middle stage still running.
    expect(finishedOf(atKill, source.id)).toHaveLength(4);
    expect(finishedOf(atKill, middle.id).length).toBeLessThan(MIDDLE_PARALLELISM);

    const standby = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 60_000);
    await standby;
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);

    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    // Which subtasks ran again, by any newer leader (the test cannot stop a loaded machine from
    // electing more than one): exactly those the log did not have finished.
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    const report = firstRecoveryAfter(final.recoveries, killed.epoch)!;
    expect(report.epoch).toBeGreaterThan(killed.epoch);
    expect(report).toMatchObject({
      restartedFromScratch: false,
      executionsRecovered: atKill.size,
      partitionsReused: 4,
      partitionsMissing: 0,
    });
    expect(report.partitionBytesReused).toBeGreaterThan(0);
  });

  it('reruns only the unfinished subtasks of a source that supports batch snapshots', async () => {
    // Three small files and a big one, read at 10 ms per line: the big file's reader is still
    // running when the others are done.
    const input = join(data, 'wc-in');
    const small = await generateTextFiles(input, { files: 3, linesPerFile: 20, seed: 11, prefix: 'a' });
    const big = await generateTextFiles(input, { files: 1, linesPerFile: 300, seed: 12, prefix: 'b' });
    const out = join(data, 'wc-out');
    const { jobId } = await cluster.submit(WORDCOUNT_JOB, [
      '--input',
      input,
      '--output',
      out,
      '--record-delay-ms',
      '10',
    ]);
    const s = await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        return st.vertices.length === 2 && st.vertices[0]!.parallelism > 0 ? st : undefined;
      },
      30_000,
      'the job to start',
    );
    const source = s.vertices[0]!;
    expect(source.parallelism).toBe(4);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= 2,
      30_000,
      'two source subtasks finished',
    );
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    const finishedSources = finishedOf(atKill, source.id).length;
    expect(finishedSources).toBeGreaterThanOrEqual(2);
    expect(finishedSources).toBeLessThan(4);

    const standby = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 60_000);
    await standby;
    expect(diffMaps(await countWordsInFiles([...small, ...big]), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    // Finished readers keep their splits consumed; only the others read again.
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !atKill.has(k)));
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({
      restartedFromScratch: false,
      executionsRecovered: finishedSources,
      executionsReset: 0,
    });
  });

  it('reruns every subtask of a source without batch snapshots that was not finished', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'legacy');
    // The reader of the split starting at 0 is slow (20 batches of 100 ms); the others are not.
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, source: 'legacy', slowSplitDelayMs: 100 }),
    );
    const { source } = await vertices(jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= 2,
      30_000,
      'two source subtasks finished',
    );
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    const finishedSources = finishedOf(atKill, source.id);
    expect(finishedSources.length).toBeGreaterThanOrEqual(2);
    expect(finishedSources.length).toBeLessThan(4);

    const standby = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 60_000);
    await standby;
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    // The enumerator's state is gone: the whole source runs again, finished subtasks included.
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices));
    for (const f of finishedSources) {
      expect(redeployed.find((e) => e.vertexId === source.id && e.subtask === f.subtask)?.attempt).toBe(f.attempt + 1);
    }
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({
      restartedFromScratch: false,
      executionsReset: finishedSources.length,
    });
  });

  it('reruns the whole job when recovery is disabled (the baseline)', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'disabled');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, reduceDelayMs: 2 }),
      {
        config: { 'taskmanager.network.combiner.max-keys': '0', 'execution.batch.job-recovery.enabled': 'false' },
      },
    );
    const { middle } = await vertices(jobId);
    // No event log without recovery: wait on the leader's own view.
    await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        return st.vertices[0]!.state === 'FINISHED' && st.vertices[1]!.tasks.running > 0;
      },
      30_000,
      'the sources to finish and the middle stage to run',
    );
    const killed = await killLeader(cluster);
    const standby = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 60_000);
    await standby;
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices));
    expect(final.vertices[1]!.id).toBe(middle.id);
    expect(final.recoveries).toEqual([]);
    expect(final.notes.join('\n')).toMatch(/restarted from scratch/);
  });

  it('reuses nothing but still finishes correctly when previous-worker.recovery.timeout is 0', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'timeout0');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, reduceDelayMs: 2 }),
      {
        config: {
          'taskmanager.network.combiner.max-keys': '0',
          'execution.batch.job-recovery.previous-worker.recovery.timeout': '0 ms',
        },
      },
    );
    const { source } = await vertices(jobId);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length === 4,
      30_000,
      'every source subtask finished',
    );
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    const standby = cluster.startJobMaster({ id: killed.id });
    const final = await cluster.waitForJob(jobId, 60_000);
    await standby;
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, killed.epoch);
    // No TaskManager could report its partitions in 0 ms: every producer runs again.
    expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices));
    for (const f of finishedOf(atKill, source.id)) {
      expect(redeployed.find((e) => e.vertexId === source.id && e.subtask === f.subtask)?.attempt).toBe(f.attempt + 1);
    }
    expect(firstRecoveryAfter(final.recoveries, killed.epoch)).toMatchObject({
      restartedFromScratch: false,
      partitionsReused: 0,
      partitionsMissing: 4,
    });
  });

  it('keeps the deployments of a new leader while tasks of a paused old leader still wait for it', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'paused');
    // 40 small splits for 4 readers: every reader asks the leader for a new split about every 200 ms.
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, splits: 40, parallelism: 4, batchSize: 10, batchDelayMs: 40 }),
    );
    const { source } = await vertices(jobId);
    await cluster.waitFor(
      async () => (await cluster.status(jobId)).vertices[0]!.tasks.running === 4,
      30_000,
      'every source subtask to run',
    );
    const paused = (await cluster.leader())!;
    // Paused, not dead (a long GC pause, a frozen VM): the readers' split requests to it hang
    // until rpc.timeout, long after a new leader has taken over and redeployed the same subtasks.
    await cluster.kill(paused.jobmasterId, 'SIGSTOP');
    // The log as the paused leader left it, read before a new leader can add to it.
    const recovered = finishedInLog(await readEventLog(cluster, jobId));
    let final;
    try {
      const next = await waitForNewLeader(cluster, paused.epoch);
      final = await cluster.waitForJob(jobId, 60_000);
      expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);
      const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, paused.epoch);
      expect(redeployedSubtasks(redeployed)).toEqual(allSubtasks(final.vertices).filter((k) => !recovered.has(k)));
      // By the leader that took over or a later one; never by the paused one.
      expect(redeployed.every((e) => (e.epoch ?? 0) >= next.epoch)).toBe(true);
      expect(redeployed.filter((e) => e.vertexId === source.id).length).toBeGreaterThan(0);
    } finally {
      await cluster.kill(paused.jobmasterId, 'SIGKILL');
    }
    await cluster.startJobMaster({ id: paused.jobmasterId });
  });
});
