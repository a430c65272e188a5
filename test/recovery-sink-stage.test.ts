import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import {
  HISTOGRAM_JOB,
  MIDDLE_PARALLELISM,
  allSubtasks,
  deployedKeys,
  deploymentsAfter,
  expectedHistogram,
  histogramArgs,
} from './recovery-util.js';
import { diffMaps, makeTempDir, readSinkOutput } from './util.js';

/**
 * The leader dies while the last stage (the one with the sink) runs, as in Flink's
 * JMFailoverITCase.testRecoverFromJMFailover. The crash point fires once the third
 * ExecutionJobVertexInitializedEvent (the sink stage's, written when its subtasks are deployed)
 * is durable, so every finished event of the sources and the middle stage is in the log. A leader
 * that takes over writes no initialized event for a vertex it replays, so it does not crash.
 * The crash comes after a flush of the event log (up to its 50 ms interval, plus fsync); the sink
 * stage of this small job once finished, and the job with it, 18 ms before that: each sink line
 * now takes half a second, so the leader dies while the stage runs. The sink blocks its
 * TaskManager's event loop meanwhile (user functions are synchronous), hence a heartbeat timeout
 * that a blocked second cannot reach.
 */
const SOURCES = 4;

describe('batch job recovery when the leader dies in the sink stage', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 3,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
        'debug.allow-test-options': 'true',
        'debug.crash.after-event': 'ExecutionJobVertexInitialized:3',
        'heartbeat.timeout': '10 s',
      },
    });
    data = await makeTempDir('rebound-it-sink-stage-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  it('keeps every source and middle subtask and reruns only the sink stage', async () => {
    const records = 2000;
    const keys = 97;
    const out = join(data, 'out');
    const { jobId } = await cluster.submit(
      HISTOGRAM_JOB,
      histogramArgs({ records, keys, output: out, splits: SOURCES, sinkDelayMs: 500 }),
    );
    const final = await cluster.waitForJob(jobId, 90_000);
    expect(diffMaps(expectedHistogram(records, keys), await readSinkOutput(out))).toEqual([]);

    const [source, middle, sinkStage] = final.vertices;
    // On a loaded machine a lease may also expire earlier; the takeover after the crash is the
    // one that found the sources and the middle stage finished.
    const report = final.recoveries.find((r) => r.executionsRecovered === SOURCES + MIDDLE_PARALLELISM);
    expect(report, JSON.stringify(final.recoveries)).toMatchObject({
      restartedFromScratch: false,
      partitionsReused: MIDDLE_PARALLELISM,
      partitionsMissing: 0,
    });
    expect(source!.parallelism + middle!.parallelism).toBe(SOURCES + MIDDLE_PARALLELISM);
    // From that takeover on, only the sink stage ran again, all of it.
    const redeployed = deploymentsAfter(await cluster.taskEvents(), jobId, report!.epoch - 1);
    expect(new Set(deployedKeys(redeployed))).toEqual(new Set(allSubtasks([sinkStage!])));
  });
});
