import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duckdbQuery, sqlString } from '@rebound/api/testing/duckdb';
import { writeTpchCsv } from '@rebound/example-support';
import { LocalCluster, suiteFailed } from './harness.js';
import { finishedInLog, finishedOf, killLeader, readEventLog, waitForLog } from './recovery-util.js';
import { csvAsDirectory, makeTempDir, readSinkLines } from './util.js';

const JOB = 'test/fixtures/distinct-topn.ts';

/**
 * distinct and topN through two JobMaster failovers in one run: the first leader is SIGKILLed
 * while the CSV source stage runs (two of its four subtasks finished), the second once it has
 * redeployed what the first left unfinished. The third leader finishes the job; the output equals
 * DuckDB's answer to the same SQL, and no recovery started over.
 */
describe('distinct and topN survive two JobMaster failovers', () => {
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
      },
    });
    data = await makeTempDir('rebound-it-operator-failovers-');
  });

  afterAll(async ({}, suite) => {
    await cluster?.stop({ keepWorkdir: suiteFailed(suite) });
    if (data) await rm(data, { recursive: true, force: true });
  });

  /** orders.csv as a directory: three files of `small` rows and one with the rest, each with the header. */
  async function ordersDirectory(name: string, seed: number, small: number): Promise<string> {
    const file = writeTpchCsv(join(data, name), 0.05, seed).orders;
    await csvAsDirectory(file, small);
    return file;
  }

  async function twoFailovers(jobId: string): Promise<void> {
    const { v: source } = await cluster.waitFor(
      async () => {
        const st = await cluster.status(jobId);
        const v = st.vertices.find((x) => x.name.startsWith('Source: Csv'));
        return v && v.parallelism > 0 ? { v } : undefined;
      },
      30_000,
      `job ${jobId} to start`,
    );
    expect(source.parallelism).toBe(4);
    await waitForLog(
      cluster,
      jobId,
      (f) => finishedOf(f, source.id).length >= 2,
      60_000,
      'two source subtasks finished',
    );
    const first = await killLeader(cluster);
    const atFirst = finishedInLog(await readEventLog(cluster, jobId));
    expect(finishedOf(atFirst, source.id).length).toBeLessThan(4);
    const restarted = cluster.startJobMaster({ id: first.id });
    // The second leader recovers the job (it adopts the source subtasks still running, and
    // redeploys nothing until they finish); then it dies too, at once: the restarted JobMaster's
    // start-up is not waited for first (on a loaded machine it took longer than the rest of the
    // job, which then finished under the second leader).
    await cluster.waitFor(
      async () => ((await cluster.status(jobId)).recoveries.some((r) => r.epoch > first.epoch) ? true : undefined),
      60_000,
      'the second leader to recover the job',
    );
    const second = await killLeader(cluster);
    await restarted;
    expect(second.epoch).toBeGreaterThan(first.epoch);
    const again = cluster.startJobMaster({ id: second.id });
    const final = await cluster.waitForJob(jobId, 120_000);
    await again;
    expect(final.recoveries.length).toBeGreaterThanOrEqual(2);
    expect(final.recoveries.every((r) => !r.restartedFromScratch)).toBe(true);
  }

  it('distinct', async () => {
    const input = await ordersDirectory('distinct', 11, 20);
    const out = join(data, 'distinct-out');
    const { jobId } = await cluster.submit(JOB, [
      '--op',
      'distinct',
      '--input',
      input,
      '--output',
      out,
      '--record-delay-ms',
      '16',
    ]);
    await twoFailovers(jobId);
    const expected = await duckdbQuery(
      `select distinct o_orderpriority, o_orderstatus from read_csv(${sqlString(`${input}/*.csv`)}, header = true)`,
    );
    const got = (await readSinkLines(out)).map((l) => JSON.parse(l) as unknown);
    const key = (r: unknown): string => JSON.stringify(r);
    expect(got.map(key).sort()).toEqual(expected.map(key).sort());
  });

  it('topN', async () => {
    const input = await ordersDirectory('topn', 12, 20);
    const out = join(data, 'topn-out');
    const { jobId } = await cluster.submit(JOB, [
      '--op',
      'topn',
      '--input',
      input,
      '--output',
      out,
      '--record-delay-ms',
      '16',
    ]);
    await twoFailovers(jobId);
    const expected = await duckdbQuery(
      `select o_orderkey, o_totalprice from read_csv(${sqlString(`${input}/*.csv`)}, header = true)
       order by o_totalprice desc, o_orderkey asc limit 10`,
    );
    const got = (await readSinkLines(out)).map((l) => JSON.parse(l) as unknown);
    expect(got).toEqual(expected);
  });
});
