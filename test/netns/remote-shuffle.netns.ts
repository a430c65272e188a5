/**
 * Hosts that are apart, remote shuffle: two JobMasters, three TaskManagers and two shuffle
 * workers, each in a network namespace of its own. Every partition is written to a worker and
 * read from it over a veth. A TaskManager's host is cut off the network mid-job: the leader takes
 * it for lost, and only what was running there runs again, because its finished work is on the
 * workers' hosts. `npm run test:netns` (root only).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { suiteFailed } from '../harness.js';
import { HISTOGRAM_JOB, expectedHistogram, finishedOf, histogramArgs, subtaskKey } from '../recovery-util.js';
import { diffMaps, readSinkOutput } from '../util.js';
import { NetnsCluster, sharedDir } from './cluster.js';
import { netnsUnavailableReason } from './network.js';
import { finishedNow, runningSubtask, startedVertices } from './scenario-util.js';

const unavailable = netnsUnavailableReason();
if (unavailable) process.stderr.write(`netns tests skipped: ${unavailable}\n`);

const RECORDS = 3000;
const KEYS = 97;

describe.skipIf(unavailable !== undefined)('hosts that are apart (network namespaces), remote shuffle', () => {
  let cluster: NetnsCluster;

  beforeAll(async () => {
    cluster = await NetnsCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      shuffleWorkers: 2,
      // This worker binds 0.0.0.0 in its namespace and advertises its address (shuffle-worker.host).
      wildcardBind: ['sw-2'],
      config: {
        'shuffle.type': 'remote',
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'taskmanager.network.block-size': '128 b',
      },
    });
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
  });

  it('a TaskManager host cut off mid-job costs only what ran there: its finished work is on the workers', async () => {
    const out = sharedDir(cluster, 'remote-tm-partition');
    const jobId = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records: RECORDS, keys: KEYS, output: out, reduceDelayMs: 5 }),
      { 'taskmanager.network.combiner.max-keys': '0' },
    );
    const { source, middle } = await startedVertices(cluster, jobId);
    await cluster.waitFor(
      async () => finishedOf(await finishedNow(cluster, jobId), source.id).length === source.parallelism,
      30_000,
      'every source subtask finished',
    );
    // A TaskManager that ran finished sources and runs a middle subtask right now.
    const before = await finishedNow(cluster, jobId);
    const running = await runningSubtask(
      cluster,
      jobId,
      middle.id,
      'a middle subtask running where finished sources ran',
      (tm) => finishedOf(before, source.id).some((f) => f.taskManagerId === tm),
    );
    const victim = running.taskManagerId;
    const finishedThere = finishedOf(before, source.id).filter((f) => f.taskManagerId === victim);
    expect(finishedThere.length).toBeGreaterThan(0);
    const partitionedAt = Date.now();
    cluster.net.partition(cluster.host(victim));
    try {
      await cluster.waitForJob(jobId, 120_000);
    } finally {
      cluster.heal(victim);
    }
    expect(diffMaps(expectedHistogram(RECORDS, KEYS), await readSinkOutput(out))).toEqual([]);
    const after = (await cluster.taskEvents()).filter(
      (e) => e.jobId === jobId && e.event === 'task.deploy' && e.time >= partitionedAt,
    );
    // The middle subtask it ran was redone elsewhere; no source ran again, not even those it ran.
    expect(after.filter((e) => e.taskManagerId === victim)).toEqual([]);
    expect(after.some((e) => e.vertexId === middle.id && e.subtask === running.subtask)).toBe(true);
    expect(after.filter((e) => e.vertexId === source.id).map((e) => subtaskKey(e.vertexId, e.subtask))).toEqual([]);
    await cluster.waitForTaskManagers(['tm-1', 'tm-2', 'tm-3'], 30_000);
  });
});
