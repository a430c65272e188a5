import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalCluster, suiteFailed } from './harness.js';
import { finishedInLog, killLeader, readEventLog, waitForLog, waitForNewLeader } from './recovery-util.js';
import { generateTextFiles, makeTempDir, readSinkLines } from './util.js';

/**
 * User operator coordinators (DataSet.process(fn, { coordinator })): examples/unique-ids.ts
 * numbers every input line with ids its coordinator hands out in blocks. Its output is checked
 * against the input (every line exactly once) and its ids must be unique, also when the leader
 * that runs the coordinator is SIGKILLed mid-job and a new one restores the coordinator from the
 * event log's batch snapshot.
 */
const UNIQUE_IDS_JOB = 'examples/unique-ids.ts';
const BROKEN_JOB = 'test/fixtures/broken-coordinator.ts';

describe('user operator coordinators', () => {
  let cluster: LocalCluster;
  let data: string;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      jobmasters: 2,
      taskmanagers: 2,
      slots: 2,
      config: {
        'execution.batch.job-recovery.enabled': 'true',
        'execution.batch.job-recovery.previous-worker.recovery.timeout': '10 s',
        'job-event.store.write-buffer.flush-interval': '50 ms',
      },
    });
    data = await makeTempDir('rebound-it-coordinators-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  /** Input files of different lengths, so that the source subtasks finish one after another. */
  async function input(name: string, linesPerFile: readonly number[]): Promise<{ dir: string; lines: string[] }> {
    const dir = join(data, name);
    const lines: string[] = [];
    for (const [i, n] of linesPerFile.entries()) {
      const [path] = await generateTextFiles(dir, { files: 1, linesPerFile: n, seed: 100 + i, prefix: `f${i}` });
      // Every line is a record, empty ones too; the file ends with a newline.
      lines.push(...(await readFile(path!, 'utf8')).replace(/\n$/, '').split('\n'));
    }
    return { dir, lines };
  }

  /** Checks the numbered output: every input line exactly once, no id twice; returns the ids. */
  async function checkNumbered(out: string, lines: readonly string[]): Promise<number[]> {
    const numbered = await readSinkLines(out);
    const ids = numbered.map((l) => Number(l.slice(0, l.indexOf('\t'))));
    expect(numbered.map((l) => l.slice(l.indexOf('\t') + 1)).sort()).toEqual([...lines].sort());
    expect(ids.every((id) => Number.isSafeInteger(id) && id >= 0)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    return ids;
  }

  it('numbers every line exactly once with ids from blocks the coordinator hands out', async () => {
    const { dir, lines } = await input('plain', [30, 45, 60, 15]);
    const out = join(data, 'plain-out');
    const blockSize = 7;
    const { jobId } = await cluster.submit(UNIQUE_IDS_JOB, [
      '--input',
      dir,
      '--output',
      out,
      '--block-size',
      String(blockSize),
    ]);
    const final = await cluster.waitForJob(jobId, 60_000);
    const ids = await checkNumbered(out, lines);
    // Blocks are consecutive: each of the 4 subtasks leaves at most part of its last block unused.
    expect(Math.max(...ids)).toBeLessThan(lines.length + final.vertices[0]!.parallelism * blockSize);
  });

  async function killMidJob(name: string, jobConfig: Record<string, string>) {
    const { dir, lines } = await input(name, [10, 20, 60, 90, 120, 150]);
    const out = join(data, `${name}-out`);
    const { jobId } = await cluster.submit(
      UNIQUE_IDS_JOB,
      ['--input', dir, '--output', out, '--block-size', '5', '--record-delay-ms', '25'],
      {
        config: jobConfig,
      },
    );
    await waitForLog(cluster, jobId, (f) => f.size >= 2, 60_000, 'two finished subtasks');
    const killed = await killLeader(cluster);
    const atKill = finishedInLog(await readEventLog(cluster, jobId));
    expect(atKill.size, 'the job was still running at the kill').toBeLessThan(6);
    await waitForNewLeader(cluster, killed.epoch);
    const final = await cluster.waitForJob(jobId, 120_000);
    // The killed JobMaster comes back as a standby for the next test.
    await cluster.startJobMaster({ id: killed.id });
    await checkNumbered(out, lines);
    return { atKill, report: final.recoveries.at(-1)! };
  }

  it('restores the coordinator from its newest snapshot after a leader SIGKILL: no id handed out twice', async () => {
    // A snapshot with every finished subtask: all of them are recovered.
    const { atKill, report } = await killMidJob('snapshot-each', {
      'execution.batch.job-recovery.snapshot.min-pause': '0 ms',
    });
    expect(report).toMatchObject({ restartedFromScratch: false, executionsRecovered: atKill.size });
  });

  it('keeps the subtasks that finished after the newest snapshot: their events hold the blocks they got', async () => {
    // The default pause of 3 min: only the first finished subtask's event carries a snapshot;
    // the others carry their answers, which the restored coordinator takes back (subtaskAdopted).
    // Running subtasks rerun (keep-running off): adopting them would also tell the coordinator
    // of later blocks, and hide a kept subtask whose block is handed out again.
    const { atKill, report } = await killMidJob('snapshot-first', {
      'execution.batch.job-recovery.keep-running-tasks': 'false',
    });
    expect(atKill.size).toBeGreaterThanOrEqual(2);
    expect(report).toMatchObject({ restartedFromScratch: false, executionsRecovered: atKill.size });
  });

  it('reruns them when their answers were not kept (max-held-coordinator-responses 0), as FLIP-383 does', async () => {
    const { atKill, report } = await killMidJob('snapshot-first-unkept', {
      'execution.batch.job-recovery.max-held-coordinator-responses': '0',
    });
    expect(atKill.size).toBeGreaterThanOrEqual(2);
    expect(report).toMatchObject({ restartedFromScratch: false, executionsRecovered: 1 });
    expect(report.executionsReset).toBeGreaterThanOrEqual(atKill.size - 1);
  });

  it.each([
    ['create', /^coordinator of 'Add offset' \(op-\d+\): creating it failed: no offsets today$/],
    ['start', /^coordinator of 'Add offset' \(op-\d+\): start failed: the offset table is missing$/],
    [
      'request',
      /^coordinator of 'Add offset' \(op-\d+\): handling a request of subtask \d+ \(attempt 0\) failed: offset service unreachable$/,
    ],
  ])('a coordinator that fails in %s fails the job with a message naming the operator', async (fail, message) => {
    const out = join(data, `broken-${fail}`);
    const { jobId } = await cluster.submit(BROKEN_JOB, ['--output', out, '--fail', fail]);
    const status = await cluster.waitForJob(jobId, 30_000, ['FAILED']);
    expect(status.failure).toMatch(message);
    expect(await readSinkLines(out).catch(() => [])).toEqual([]);
  });
});
